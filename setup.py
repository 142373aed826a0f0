"""The part of the packaging pyproject.toml cannot say: the top-level folders `workloads/` and
`themes/` are shipped as subpackages of agentx_tui (their YAML files as package data, globs in
pyproject.toml), so the repository keeps one copy of each, in the editable install and in a wheel."""

from setuptools import find_namespace_packages, setup

# Subpackage → the folder it is shipped from; every other package is found under src/. Each folder
# holds an `__init__.py`: an editable install's import hook maps only regular packages to a folder.
DATA_PACKAGES = {
    "agentx_tui.load.workload.presets": "workloads",
    "agentx_tui.ui.themes": "themes",
}

setup(
    packages=sorted({*find_namespace_packages("src", include=["agentx_tui*"]), *DATA_PACKAGES}),
    package_dir={"": "src", **DATA_PACKAGES},
)
