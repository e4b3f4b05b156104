"""The README's tables are generated, so they say what the code does."""
from __future__ import annotations

from pathlib import Path

from flashscale import cluster, execute
from flashscale.measure import results

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"


def test_the_readme_lists_every_results_column_as_results_says():
    table = results.schema_markdown().strip()
    assert table in README.read_text()
    assert all(f"`{name}`" in table for name in results.ALL_COLUMNS)


def readme_campaigns() -> list[str]:
    """The README's campaign files: its yaml blocks with a ``campaign:`` key."""
    blocks = README.read_text().split("```yaml\n")[1:]
    return [block.split("```", 1)[0] for block in blocks if "\ncampaign:" in "\n" + block.split("```", 1)[0]]


def test_the_readmes_cluster_campaign_over_real_hosts_is_accepted_as_written(tmp_path):
    """A reader copies it: it must load, and its hosts must make a cluster spec (it once said link_bps: 12.0e9,
    which YAML reads as a string, and HOSTS: [1, 2, 4] over two hosts)."""
    (cluster_file,) = [text for text in readme_campaigns() if "REMOTE_HOSTS" in text]
    path = tmp_path / "my-cluster.yaml"
    path.write_text(cluster_file)
    loaded = execute.load_campaign(path)
    spec = cluster.ClusterSpec.from_parameters(CAMPAIGN=loaded["campaign"], **loaded["parameters"])
    assert [host.link_bps for host in spec.remote] == [12e9, 12e9] and max(spec.hosts) == len(spec.remote)
    execute.check_parameters(ROOT / "notebooks" / "10_cluster.ipynb", loaded["parameters"])
