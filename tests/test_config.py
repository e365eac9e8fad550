
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


def test_show_config_as_a_statement_prints_the_report(capsys):
    cfg = kernelselect.show_config()
    out = capsys.readouterr().out
    assert out.splitlines()[0].startswith("version")
    assert "openmp" in out and "fft_backend" in out and out == str(cfg) + "\n"
    assert isinstance(cfg, dict) and cfg["version"] == kernelselect.__version__
    assert repr(cfg).startswith("{")            # the data, as a dict shows itself


def test_show_config_dicts_mode_returns_without_printing(capsys):
    cfg = kernelselect.show_config(mode="dicts")
    assert capsys.readouterr().out == ""
    assert isinstance(cfg["openmp"], bool)
    with pytest.raises(ValueError, match="mode='json'"):
        kernelselect.show_config(mode="json")
