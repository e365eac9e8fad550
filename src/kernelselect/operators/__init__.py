"""Stand-ins for the kernel matrix, one module per approximation."""
