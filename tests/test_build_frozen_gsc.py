"""The frozen `gsc` build: one discovery document, and the checklist on the fake Search Console.

Split per connector so pytest-xdist (--dist loadfile) freezes the connectors on different workers;
the build itself is shared (root conftest.py ``frozen_build``). Slow: marked ``build``.
"""

from pathlib import Path

import pytest
from analytics_acp_build.build import human_size
from analytics_acp_build.check import Target, failed, run_check
from analytics_acp_build.package import folder_size
from build_support import internal_packages

pytestmark = [pytest.mark.build, pytest.mark.slow, pytest.mark.timeout(1800)]


@pytest.fixture(scope="module")
def gsc(frozen_build):
    result = frozen_build("gsc")
    assert result.ok, result.error
    return result


def test_gsc_build_carries_one_discovery_document(gsc):
    inside = internal_packages(gsc.folder)
    assert {"googleapiclient", "google", "httplib2", "analytics_acp_gsc", "analytics_acp_google"} <= inside
    assert not inside & {"sqlalchemy", "duckdb", "playwright", "matplotlib", "statsmodels", "analytics_acp_databases", "pytest"}
    docs = [p.name for p in gsc.folder.rglob("googleapiclient/discovery_cache/documents/*.json")]
    assert docs == ["searchconsole.v1.json"]  # not the 110 MB of every API
    print(f"gsc frozen: folder {human_size(folder_size(gsc.folder))}, zip {human_size(gsc.zip.stat().st_size)}")


def test_gsc_frozen_passes_the_checklist_on_the_fake(gsc):
    import sys

    here = Path(__file__).resolve().parents[1] / "connectors"
    sys.path[:0] = [str(here / "google" / "tests"), str(here / "gsc" / "tests")]
    import datetime as dt

    from analytics_acp_gsc.dates import today_pt
    from gscfake import DOMAIN, running_fakes

    with running_fakes(today_pt() - dt.timedelta(days=2)) as fakes:
        items = run_check(Target(zip=gsc.zip), credentials=fakes.service_account(), config=fakes.config, resource_id=DOMAIN,
                          sample_calls=[("search_analytics", {"dimensions": ["query", "date"]}),
                                        ("inspect_urls", {"urls": ["https://example.com/blog/p0"]}), ("sitemaps", {})],
                          env={"ANALYTICS_ACP_GOOGLE_DEADLINE_S": "5"}, timeout=120)
        assert fakes.queries(DOMAIN), "the frozen server reached the fake through googleapiclient"
    assert not failed(items), [(i.item, i.evidence) for i in failed(items)]
