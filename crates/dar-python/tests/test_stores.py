"""az:// and gs:// tables through real servers on 127.0.0.1: Azurite and
fake-gcs-server, run by dar-io's `store_server` example (which finds them
through DAR_AZURITE and DAR_FAKE_GCS_SERVER, as .ci/run sets them). The
shared DV, column-mapping and V2-checkpoint tables read as the local ones;
errors never carry a secret. Without the servers the tests skip loudly,
unless DAR_REQUIRE_STORES=1 or CI is set, where they fail."""

import os
import subprocess
import sys

import pytest

import dar
from conftest import SAMPLE, sorted_rows

TABLES = {
    "dv": "kernel/table-with-dv-small",
    "cm": "kernel/cdf-column-mapping-name-mode-3-7",
    "v2": "kernel/v2-checkpoints-parquet-with-sidecars",
}


def start(store_server_bin, kind: str, container: str, testdata):
    uploads = [str(SAMPLE), "sample"]
    for name, path in TABLES.items():
        uploads += [str(testdata / path), name]
    server = subprocess.Popen(
        [str(store_server_bin), kind, container, *uploads],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    options, extra = {}, {}
    for line in server.stdout:
        line = line.rstrip("\n")
        if line.startswith("SKIP "):
            server.wait(timeout=30)
            message = line[len("SKIP ") :]
            print(f"SKIPPED: {message}", file=sys.stderr)
            pytest.skip(message)
        if line == "READY":
            break
        key, value = line.split("=", 1)
        if key.startswith("@"):
            extra[key[1:]] = value
        else:
            options[key] = value
    else:
        server.wait(timeout=30)
        pytest.fail(f"store_server {kind} exited with {server.returncode} before READY")
    return server, options, extra


@pytest.fixture(scope="module")
def azure(store_server_bin, testdata):
    server, options, extra = start(store_server_bin, "azure", "tables", testdata)
    yield options, extra
    server.stdin.close()
    server.wait(timeout=30)


@pytest.fixture(scope="module")
def gcs(store_server_bin, testdata):
    server, options, extra = start(store_server_bin, "gcs", "tables", testdata)
    yield options
    server.stdin.close()
    server.wait(timeout=30)


def local(name: str, testdata):
    return SAMPLE if name == "sample" else testdata / TABLES[name]


def assert_lazy_polars_as_local(uri: str, options: dict):
    """A lazy Polars query over the remote sample answers as over the local one."""
    import polars as pl

    def query(lf):
        return lf.filter(pl.col("trip_id").is_between(160, 180)).select("trip_id", "fare")

    got = query(dar.scan_polars(uri, storage_options=options)).collect()
    want = query(dar.scan_polars(str(SAMPLE))).collect()
    assert got.height == dar.Table(str(SAMPLE)).scan(filter="trip_id BETWEEN 160 AND 180").count()
    assert got.height > 0
    assert sorted(got.rows()) == sorted(want.rows())


def assert_reads_as_local(uri_prefix: str, options: dict, testdata):
    for name in ["sample", *TABLES]:
        want = dar.Table(str(local(name, testdata)))
        t = dar.Table(f"{uri_prefix}/{name}", storage_options=options)
        assert t.version == want.version, name
        assert t.schema == want.schema, name
        assert t.protocol == want.protocol, name
        assert sorted_rows(t.scan().to_table()) == sorted_rows(want.scan().to_table()), name
        assert t.scan().count() == want.scan().count(), name


def test_azure_tables_read_as_the_local_ones(azure, testdata):
    options, extra = azure
    assert options["azure_storage_endpoint"].startswith("http://127.0.0.1:"), options
    assert_reads_as_local("az://tables", options, testdata)
    assert_lazy_polars_as_local("az://tables/sample", options)
    sas = {k: v for k, v in options.items() if k != "azure_storage_account_key"}
    sas["azure_storage_sas_token"] = extra["sas"]
    assert_reads_as_local("az://tables", sas, testdata)
    t = dar.Table("abfss://tables@devstoreaccount1.dfs.core.windows.net/dv", storage_options=options)
    assert t.uri.startswith("abfss://tables@devstoreaccount1.dfs.core.windows.net/dv")
    assert t.scan().count() == dar.Table(str(testdata / TABLES["dv"])).scan().count()


def test_azure_errors_never_carry_a_secret(azure):
    options, extra = azure
    key = options["azure_storage_account_key"]
    wrong = dict(options, azure_storage_account_key="d3Jvbmcta2V5LW5ldmVyLXByaW50ZWQ=")
    with pytest.raises(dar.StorageError) as e:
        dar.Table("az://tables/sample", storage_options=wrong)
    assert "d3Jvbmcta2V5" not in str(e.value) and key not in str(e.value)
    assert "az://tables/sample" in str(e.value)
    expired = {k: v for k, v in options.items() if k != "azure_storage_account_key"}
    expired["azure_storage_sas_token"] = extra["expired_sas"]
    sig = extra["expired_sas"].split("sig=")[1]
    with pytest.raises(dar.StorageError) as e:
        dar.Table("az://tables/sample", storage_options=expired)
    assert sig not in str(e.value) and extra["expired_sas"] not in str(e.value)
    assert "\n" not in str(e.value)
    with pytest.raises(dar.DarError) as e:
        dar.Table("az://nosuchcontainer/sample", storage_options=options)
    assert key not in str(e.value) and "az://nosuchcontainer/sample" in str(e.value)


def test_gcs_tables_read_as_the_local_ones(gcs, testdata):
    assert gcs["google_base_url"].startswith("http://127.0.0.1:"), gcs
    assert_reads_as_local("gs://tables", gcs, testdata)
    assert_lazy_polars_as_local("gs://tables/sample", gcs)
    with pytest.raises(dar.NotFoundError, match="not a Delta table"):
        dar.Table("gs://tables/missing", storage_options=gcs)
    with pytest.raises(dar.DarError) as e:
        dar.Table("gs://nosuchbucket/sample", storage_options=gcs)
    assert "gs://nosuchbucket/sample" in str(e.value)
