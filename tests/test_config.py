import sys

import pytest

import kernelselect


def test_show_config_keys_and_types():
    cfg = kernelselect.show_config()
    for key in ("version", "openmp", "omp_max_threads", "fft_backend", "fft_threads", "blas"):
        assert key in cfg
    assert cfg["version"] == kernelselect.__version__
    assert isinstance(cfg["openmp"], bool)
    assert isinstance(cfg["omp_max_threads"], int) and cfg["omp_max_threads"] >= 1
    assert cfg["fft_backend"] in ("pyfftw", "scipy")
    assert isinstance(cfg["blas"], list)
    assert cfg["vector_math"] in ("libmvec", "scalar")


def test_show_config_prints_a_table():
    text = str(kernelselect.show_config())
    assert "openmp" in text and "fft_backend" in text
    assert "{" not in text.splitlines()[0]


def test_built_with_openmp():
    # The wheel is built with OpenMP on every platform we ship; prange must not be serial.
    assert kernelselect.show_config()["openmp"] is True


def test_show_config_returns_the_report_without_printing(capsys):
    """At the prompt the report shows once: the call prints nothing and the returned
    dict's repr is the table (it printed and returned a dict shown as a dict)."""
    cfg = kernelselect.show_config()
    assert capsys.readouterr().out == ""
    assert isinstance(cfg, dict) and cfg["version"] == kernelselect.__version__
    assert repr(cfg) == str(cfg) and repr(cfg).splitlines()[0].startswith("version")
    assert "openmp" in repr(cfg) and "fft_backend" in repr(cfg)
    assert dict(cfg)["openmp"] is cfg["openmp"]          # the values, as a dict
    shown = []
    sys.displayhook, hook = (lambda value: shown.append(repr(value))), sys.displayhook
    try:                                             # what the interactive prompt does
        exec(compile("kernelselect.show_config()", "<stdin>", "single"),
             {"kernelselect": kernelselect})
    finally:
        sys.displayhook = hook
    assert capsys.readouterr().out == "" and shown == [str(cfg)]


def test_show_config_modes(capsys):
    cfg = kernelselect.show_config(mode="dicts")
    assert capsys.readouterr().out == ""
    assert isinstance(cfg["openmp"], bool)
    assert kernelselect.show_config(mode="stdout") is None
    out = capsys.readouterr().out
    assert out.splitlines()[0].startswith("version") and out.count("fft_backend") == 1
    with pytest.raises(ValueError, match="mode='json'"):
        kernelselect.show_config(mode="json")
