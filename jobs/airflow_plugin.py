"""The twinflow Airflow plugin (entry point ``airflow.plugins``, so an installed twinflow brings
it): the queries' ops reports in the Airflow UI.

- a tab **twinflow report** on every DAG's page: the report of the query the DAG belongs to
  (``twinflow_<q>``, ``twinflow_audit_<q>``, ...), as the DAGs last rendered it
  (jobs/ops_reports.py);
- an entry **twinflow reports** in the navigation: the list of reports.

Served by the API server from ``$TWINFLOW_HOME/reports/`` (so the API server needs
``TWINFLOW_HOME``, docs/DEPLOY.md), only to users that may read the DAG (Airflow's auth
manager, the same check as the DAG's own pages)."""

from __future__ import annotations

import html
from functools import cached_property
from pathlib import Path

from airflow.plugins_manager import AirflowPlugin

PREFIX = "/twinflow"


def _app():
    from airflow.api_fastapi.core_api.security import requires_access_dag
    from fastapi import Depends, FastAPI, HTTPException
    from fastapi.responses import FileResponse, HTMLResponse

    from jobs.ops_reports import query_of
    from operators_lib.errors import InputError
    from operators_lib.paths import reports_dir

    app = FastAPI(title="twinflow reports")

    def reports() -> dict[str, Path]:
        try:
            folder = reports_dir()
        except InputError as e:  # an installed twinflow without TWINFLOW_HOME
            raise HTTPException(503, f"twinflow reports: {e}") from None
        return {p.stem: p for p in sorted(folder.glob("*.html"))}

    # (response_model=None: the pages are HTML, not JSON models)
    @app.get("/reports/", response_class=HTMLResponse, response_model=None,
             dependencies=[Depends(requires_access_dag("GET"))])
    def index() -> str:
        items = "".join(f"<li><a href='twinflow_{html.escape(q)}'>{html.escape(q)}</a></li>"
                        for q in reports())
        return ("<!doctype html><html><head><meta charset='utf-8'><title>twinflow reports"
                f"</title></head><body><h1>twinflow reports</h1><ul>{items or 'none yet'}"
                "</ul></body></html>")

    @app.get("/reports/{dag_id}", response_class=FileResponse, response_model=None,
             dependencies=[Depends(requires_access_dag("GET"))])
    def report(dag_id: str) -> FileResponse:
        pages = reports()
        query = query_of(dag_id, set(pages))
        if query is None:
            raise HTTPException(404, f"no twinflow report for {dag_id}: reports are rendered "
                                     "by each query DAG's `report` task and the daily "
                                     "twinflow_reports DAG")
        return FileResponse(pages[query], media_type="text/html")

    return app


class TwinflowPlugin(AirflowPlugin):
    name = "twinflow"
    external_views = [
        {"name": "twinflow report", "href": f"{PREFIX.lstrip('/')}/reports/{{DAG_ID}}",
         "destination": "dag", "url_route": "twinflow-report"},
        {"name": "twinflow reports", "href": f"{PREFIX.lstrip('/')}/reports/",
         "destination": "nav", "url_route": "twinflow-reports"}]

    # Built only where Airflow asks for it (the API server): every Airflow process loads
    # plugins, and the app imports the API server's security modules.
    @cached_property
    def fastapi_apps(self) -> list[dict]:
        return [{"app": _app(), "url_prefix": PREFIX, "name": "twinflow reports"}]
