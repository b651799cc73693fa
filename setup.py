"""The wheel's packages (the rest is in pyproject.toml): twinflow's, and its DAG files, ``dags/``
as the package ``twinflow_dags`` (``twinflow dags install`` points an Airflow DAGs folder at
them)."""

from setuptools import find_packages, setup

setup(packages=[*find_packages(include=["operators_lib*", "jobs*"]), "twinflow_dags"],
      package_dir={"twinflow_dags": "dags"})
