"""Sphinx configuration of the kernelselect documentation.

Build (from the repository root, with ``pip install ".[docs]"``)::

    sphinx-build -W --keep-going -b html docs docs/_build/html

The build runs the gallery scripts in docs/examples/ (sphinx-gallery) and compiles
and runs the downstream Cython extension in docs/cimport_example/.
"""

import os
import sys

import kernelselect

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "cimport_example"))

# Technical notes: every top-level Markdown page (criteria.md and the notes written
# beside it) goes into the "Technical notes" toctree that index.rst includes, generated
# here so that a new note needs no edit.
_NOTES = sorted(name[:-3] for name in os.listdir(HERE)
                if name.endswith(".md") and name != "changelog.md")
_notes_text = (".. toctree::\n   :maxdepth: 2\n   :caption: Technical notes\n\n"
               + "".join(f"   {name}\n" for name in _NOTES))
os.makedirs(os.path.join(HERE, "_generated"), exist_ok=True)
_notes_path = os.path.join(HERE, "_generated", "notes_toctree.inc")
if not os.path.exists(_notes_path) or open(_notes_path, encoding="utf-8").read() != _notes_text:
    with open(_notes_path, "w", encoding="utf-8") as fh:
        fh.write(_notes_text)

project = "kernelselect"
author = "kernelselect developers"
copyright = "2026, kernelselect developers"
version = release = kernelselect.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "numpydoc",
    "myst_parser",
    "sphinx_gallery.gen_gallery",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
exclude_patterns = ["_build", "examples", "_generated/*.txt", "cimport_example", "**.ipynb_checkpoints",
                    "auto_examples/*.ipynb", "auto_examples/*.py", "auto_examples/*.zip"]
templates_path = ["_templates"]

# API reference: one page per public name, from the numpydoc docstrings.
autosummary_generate = True
autodoc_typehints = "none"          # the signature and the Parameters section say it
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False

myst_enable_extensions = ["dollarmath"]
# The technical notes are also read on the repository host, where they link to files
# outside docs/ (benchmark tables, scripts); Sphinx cannot resolve those links and
# renders them as plain text instead of failing the build.
suppress_warnings = ["myst.xref_missing"]
myst_heading_anchors = 3

sphinx_gallery_conf = {
    "examples_dirs": "examples",
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"/plot_",
    "abort_on_example_error": True,
    "download_all_examples": False,
    "show_memory": False,
    "remove_config_comments": True,
    "within_subsection_order": "FileNameSortKey",
    "min_reported_time": 1,
    "matplotlib_animations": False,
}

html_theme = "pydata_sphinx_theme"
html_title = f"kernelselect {release}"
html_theme_options = {
    "navigation_with_keys": False,
    "header_links_before_dropdown": 4,
    "show_toc_level": 2,
    "secondary_sidebar_items": ["page-toc"],
    "footer_start": ["copyright"],
    "footer_end": ["sphinx-version"],
}
# Pages without sub-pages get no (empty) section navigation.
html_sidebars = {"**": ["sidebar-nav-bs"],
                 **{page: [] for page in ("index", "install", "quickstart", "cimport", "changelog",
                                          *_NOTES)}}
html_static_path = []
html_show_sourcelink = False


def _cimport_example(app):
    """Compile and run the downstream extension; its report is shown on cimport.rst.
    A failure fails the build."""
    import run  # docs/cimport_example/run.py

    out_dir = os.path.join(HERE, "_generated")
    os.makedirs(out_dir, exist_ok=True)
    build_dir = os.path.join(app.outdir, "..", "cimport_build")
    report = run.build_and_run(os.path.abspath(build_dir))
    path = os.path.join(out_dir, "cimport_output.txt")
    old = open(path, encoding="utf-8").read() if os.path.exists(path) else None
    if old != report + "\n":  # rewrite only on change, so that Sphinx does not rebuild
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(report + "\n")


def setup(app):
    app.connect("builder-inited", _cimport_example)
