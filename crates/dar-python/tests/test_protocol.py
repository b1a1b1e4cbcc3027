"""Table.protocol and dar.protocol: every feature with what dar makes of it
and the verdict, equal to `dar info --json`'s protocol object; dar.protocol
answers for tables dar refuses, whose Table() raises."""

import json

import pyarrow as pa
import pytest

import dar
from conftest import SAMPLE, cli_error, run_dar, write_delta_table


def info_protocol(dar_bin, table: str) -> dict:
    out = run_dar(dar_bin, "info", table, "--json")
    assert out.returncode == 0, out.stderr.decode()
    return json.loads(out.stdout)["protocol"]


def with_protocol(tmp_path, protocol: dict):
    """A one-file table (x: 1, 2, 3) whose protocol action is `protocol`."""
    root = write_delta_table(
        tmp_path / "t", [("x", "long", True)], [("a.parquet", pa.table({"x": [1, 2, 3]}))]
    )
    commit = root / "_delta_log" / "00000000000000000000.json"
    lines = commit.read_text().splitlines()
    lines[0] = json.dumps({"protocol": protocol})
    commit.write_text("\n".join(lines) + "\n")
    return str(root)


def test_the_sample_protocol_and_its_verdict(dar_bin):
    p = dar.Table(SAMPLE).protocol
    assert p["min_reader_version"] == 3 and p["min_writer_version"] == 7
    assert p["reader_features"] == ["deletionVectors"]
    assert p["writer_features"] == ["deletionVectors"]
    assert p["dar_reads"] is True
    assert p["refused"] == []
    assert p["verdict"] == "dar reads this table exactly"
    [f] = p["features"]
    assert f["name"] == "deletionVectors"
    assert f["kind"] == "reader-writer"
    assert f["source"] == "readerFeatures"
    assert f["required_by_readers"] is True
    assert f["dar"] == "reads"
    assert "deletion vectors" in f["meaning"]
    assert p == info_protocol(dar_bin, str(SAMPLE))
    assert dar.protocol(SAMPLE) == p
    assert dar.protocol(SAMPLE, version=0) == dar.Table(SAMPLE, version=0).protocol


@pytest.mark.parametrize(
    "feature",
    ["catalogManaged", "variantShredding-preview", "geospatial", "someFutureReaderFeature"],
)
def test_refused_features_are_reported_and_refused(tmp_path, dar_bin, feature):
    t = with_protocol(
        tmp_path,
        {
            "minReaderVersion": 3,
            "minWriterVersion": 7,
            "readerFeatures": ["deletionVectors", feature],
            "writerFeatures": ["deletionVectors", feature, "invariants"],
        },
    )
    p = dar.protocol(t)
    assert p["dar_reads"] is False
    assert p["refused"] == [feature]
    assert p["verdict"] == f"dar cannot read this table: reader feature {feature}"
    assert [(f["name"], f["dar"]) for f in p["features"]] == [
        ("deletionVectors", "reads"),
        (feature, "refused"),
        ("invariants", "not needed"),
    ]
    assert p == info_protocol(dar_bin, t)
    # And the scan refuses it, naming the same feature.
    with pytest.raises(dar.ProtocolUnsupportedError) as e:
        dar.Table(t)
    assert f"'{feature}'" in str(e.value)
    assert str(e.value) == cli_error(dar_bin, "scan", t)


def test_legacy_versions_imply_features(tmp_path, dar_bin):
    t = with_protocol(tmp_path, {"minReaderVersion": 2, "minWriterVersion": 5})
    p = dar.Table(t).protocol
    assert p["reader_features"] is None and p["writer_features"] is None
    assert [(f["name"], f["source"], f["dar"]) for f in p["features"]] == [
        ("columnMapping", "minReaderVersion 2", "reads"),
        ("appendOnly", "minWriterVersion 5", "not needed"),
        ("invariants", "minWriterVersion 5", "not needed"),
        ("checkConstraints", "minWriterVersion 5", "not needed"),
        ("changeDataFeed", "minWriterVersion 5", "not needed"),
        ("generatedColumns", "minWriterVersion 5", "not needed"),
    ]
    assert p["verdict"] == "dar reads this table exactly"
    assert p == info_protocol(dar_bin, t)
    assert dar.Table(t).scan().to_table().num_rows == 3


def test_shared_tables(testdata, dar_bin):
    geo = str(testdata / "kernel" / "table-with-geo")
    p = dar.protocol(geo)
    assert p["verdict"] == "dar cannot read this table: reader feature geospatial"
    assert p == info_protocol(dar_bin, geo)
    with pytest.raises(dar.ProtocolUnsupportedError):
        dar.Table(geo)
    for name in ["unshredded-variant", "table-with-dv-small", "cdf-column-mapping-name-mode-3-7"]:
        t = str(testdata / "kernel" / name)
        p = dar.Table(t).protocol
        assert p["dar_reads"] is True, name
        assert p == info_protocol(dar_bin, t) == dar.protocol(t), name


def test_protocol_errors():
    with pytest.raises(dar.NotFoundError, match="not a Delta table"):
        dar.protocol("/nonexistent/table")
    with pytest.raises(dar.InvalidArgumentError):
        dar.protocol(SAMPLE, version=-1)
    with pytest.raises(dar.NotFoundError):
        dar.protocol(SAMPLE, version=99)
