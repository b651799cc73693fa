"""``twinflow_reports``: every query's ops report rendered once a day (and by each query DAG
run's ``report`` task), under ``$TWINFLOW_HOME/reports/<query>.html``; the twinflow Airflow
plugin shows them in the UI (a "twinflow report" tab on each DAG, "twinflow reports" in the
navigation; jobs/airflow_plugin.py). One task, on the worker, no Spark: the reports of
queries whose runs stopped still show how old their last run is."""

from __future__ import annotations

from datetime import datetime

from airflow.sdk import DAG, task

from operators_lib.paths import queries_dir

# (named by its id: the DAG file `twinflow dags install` writes imports every module's names)
twinflow_reports = DAG(dag_id="twinflow_reports", schedule="@daily",
                       start_date=datetime(2024, 1, 1), catchup=False, max_active_runs=1,
                       doc_md=__doc__, tags=["twinflow", "maintenance"])

with twinflow_reports:

    @task
    def render() -> dict[str, str]:
        from jobs.ops_reports import render_all

        return render_all(sorted(queries_dir().glob("*.json")))

    render()
