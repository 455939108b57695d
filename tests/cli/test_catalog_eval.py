"""`catalog eval` and the catalogue readers: both layouts, case-blind categories, the policy."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from weakincentives._cli import main

RECORDS = [
    {
        "tool_id": "storage/put_object",
        "name": "put_object",
        "path": ["Storage", "Buckets"],
        "summary": "Upload a file to a bucket",
    },
    {
        "tool_id": "storage/get_object",
        "name": "get_object",
        "path": ["Storage", "Buckets"],
        "summary": "Download a file from a bucket",
    },
    {
        "tool_id": "coding/rename_symbol",
        "name": "rename_symbol",
        "path": ["Coding", "Refactoring"],
        "summary": "Rename a symbol across the codebase",
    },
    {
        "tool_id": "secret/launch_codes",
        "name": "launch_codes",
        "path": ["Secret"],
        "summary": "Upload the launch codes to a bucket",
    },
]
QUERIES = [
    {"qid": "up", "query": "upload a file to a bucket", "relevant": ["storage/put_object"]},
    {"qid": "ren", "query": "rename a symbol", "relevant": ["coding/rename_symbol"]},
    {
        "qid": "both",
        "query": "download a file",
        "relevant": ["storage/get_object", "coding/rename_symbol"],
    },
    {"qid": "sec", "query": "launch codes", "relevant": ["secret/launch_codes"]},
]


def run(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    return main(list(argv), out=out), out.getvalue()


@pytest.fixture
def files(tmp_path: Path) -> tuple[str, str]:
    """The catalogue as JSON lines, the queries as one JSON array."""
    catalog = tmp_path / "catalog.jsonl"
    catalog.write_text("\n".join(json.dumps(record) for record in RECORDS) + "\n")
    queries = tmp_path / "queries.json"
    queries.write_text(json.dumps(QUERIES, indent=2))
    return str(catalog), str(queries)


def test_eval_reports_recall_mrr_and_the_missed_queries(files: tuple[str, str]) -> None:
    """Metrics over every query, then each miss with where its tools ranked and what came first."""
    code, text = run("catalog", "eval", *files, "--k", "1")
    assert code == 0
    lines = text.splitlines()
    assert lines[0] == "4 queries against 4 tools (k=1)"
    assert lines[1].startswith("R@1 0.875  R@10 0.875  MRR 1.000")
    assert "MRR " in lines[1]
    assert "[both] download a file" in text
    assert "expected storage/get_object: rank 1" in text
    assert "expected coding/rename_symbol: not in the top 10" in text
    assert "ranked   storage/get_object (" in text


def test_hidden_tools_are_never_printed(files: tuple[str, str]) -> None:
    """With --hide, the hidden tool is neither counted, expected, nor shown as a ranked result."""
    code, text = run("catalog", "eval", *files, "--hide", "secret/launch_codes", "--k", "1")
    assert code == 0
    assert "launch" not in text
    assert "secret" not in text.lower()
    assert text.splitlines()[:2] == [
        "3 queries against 3 tools (k=1)",
        "1 queries skipped: no visible expected tool",
    ]


def test_a_category_matches_case_insensitively(files: tuple[str, str]) -> None:
    """--category storage/buckets finds Storage/Buckets."""
    code, text = run("catalog", "eval", *files, "--category", "storage/BUCKETS", "--show", "0")
    assert code == 0
    assert text.splitlines()[0] == "4 queries against 4 tools under Storage/Buckets (k=5)"


def test_an_unknown_category_prints_the_hints(
    files: tuple[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    """A misspelt segment fails with the nearest categories the caller may see."""
    code, _ = run("catalog", "eval", *files, "--category", "Storage/Buckts")
    assert code == 1
    error = capsys.readouterr().err
    assert "UNKNOWN_PATH" in error
    assert "try: Storage/Buckets" in error


def test_search_reads_a_json_array_and_a_case_blind_category(tmp_path: Path) -> None:
    """catalog search accepts an array file and --category in any case."""
    catalog = tmp_path / "catalog.json"
    catalog.write_text(json.dumps(RECORDS))
    code, text = run("catalog", "search", str(catalog), "upload", "--category", "storage")
    assert code == 0
    assert text.splitlines()[1].endswith("storage/put_object")
    assert "launch" not in text


def test_query_files_as_json_lines_may_hold_blank_lines(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Blank lines between queries are skipped; a missing queries file is named."""
    catalog = tmp_path / "c.jsonl"
    catalog.write_text("\n".join(json.dumps(record) for record in RECORDS))
    queries = tmp_path / "q.jsonl"
    query = {"query": "upload an object", "relevant": ["storage/put_object"]}
    queries.write_text("\n\n" + json.dumps(query) + "\n\n")
    code, text = run("catalog", "eval", str(catalog), str(queries))
    assert code == 0
    assert text.startswith("1 queries against 4 tools (k=5)\nR@1 1.000")
    assert run("catalog", "eval", str(catalog), str(tmp_path / "none.jsonl"))[0] == 1
    assert capsys.readouterr().err.startswith("wink: error: queries file '")


def test_a_catalogue_that_is_not_utf8_is_a_clear_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Bytes that are not UTF-8 name the line and byte instead of raising UnicodeDecodeError."""
    catalog = tmp_path / "c.jsonl"
    catalog.write_bytes(json.dumps(RECORDS[0]).encode() + b'\n{"tool_id": "\xff"}\n')
    code, _ = run("catalog", "search", str(catalog), "upload")
    assert code == 1
    assert capsys.readouterr().err == (
        f"wink: error: {catalog}:2: undecodable bytes (invalid start byte at byte 13)\n"
    )


@pytest.mark.parametrize(
    ("catalog_text", "queries_text", "message"),
    [
        ("[1, 2]", "[]", "c.json item 1: expected a JSON object (one tool record) per item"),
        ("[{", "[]", "c.json: invalid JSON (Expecting property name"),
        ('{"tool_id": 1}\nnope', "[]", "c.json:2: invalid JSON (Expecting value at column 1)"),
        (
            '{"tool_id": NaN}',
            "[]",
            "c.json:1: invalid JSON (NaN is not a JSON number at column 13)",
        ),
        ("{RECORDS}", "[" * 50_000 + "]" * 50_000, "not valid JSON (JSON nested more than 128"),
        ("{RECORDS}", '{"query": Infinity}', "q.json:1: not valid JSON (invalid JSON (Infinity"),
        ("{RECORDS}", "[1]", "q.json: item 1 is not a JSON object"),
        ('{"tool_id": 1, "name": "x", "path": ["A"]}', "[]", "tool_id and name must be strings"),
        ("{RECORDS}", '[{"query": "", "relevant": ["a"]}]', "non-empty string 'query'"),
        ("{RECORDS}", '[{"query": "x", "relevant": []}]', "non-empty list of tool ids"),
        (
            "{RECORDS}",
            '[{"query": "x", "relevant": ["nope"]}]',
            "1 relevant id(s) are not in the catalogue, e.g. nope (--skip-unknown leaves them out)",
        ),
        ("{RECORDS}", '{"query": "x"}', "non-empty list of tool ids"),
    ],
)
def test_bad_files_are_clear_errors(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    catalog_text: str,
    queries_text: str,
    message: str,
) -> None:
    """Malformed catalogues and query files name the file and the problem."""
    catalog = tmp_path / "c.json"
    catalog.write_text(catalog_text.replace("{RECORDS}", json.dumps(RECORDS)))
    queries = tmp_path / "q.json"
    queries.write_text(queries_text)
    code, _ = run("catalog", "eval", str(catalog), str(queries))
    assert code == 1
    assert message in capsys.readouterr().err


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--k", "0"], "--k must be from 1 to 50, got 0"),
        (["--k", "51"], "--k must be from 1 to 50"),
        (["--show", "-1"], "--show must be 0 or more missed queries, got -1"),
    ],
)
def test_bad_options_are_clear_errors(
    files: tuple[str, str], capsys: pytest.CaptureFixture[str], extra: list[str], message: str
) -> None:
    """Out-of-range options are refused."""
    code, _ = run("catalog", "eval", *files, *extra)
    assert code == 1
    assert message in capsys.readouterr().err


def test_missing_files_are_reported(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Both file arguments must exist."""
    code, _ = run("catalog", "eval", str(tmp_path / "a.jsonl"), str(tmp_path / "b.jsonl"))
    assert code == 1
    assert "catalogue file" in capsys.readouterr().err


def test_skip_unknown_leaves_out_ids_the_catalogue_lacks(tmp_path: Path) -> None:
    """--skip-unknown drops missing ids from the labels, counts them and skips emptied queries."""
    catalog = tmp_path / "c.jsonl"
    catalog.write_text("\n".join(json.dumps(record) for record in RECORDS))
    queries = tmp_path / "q.jsonl"
    rows = [
        {"qid": "up", "query": "upload a file to a bucket", "relevant": ["storage/put_object"]},
        {
            "qid": "mixed",
            "query": "rename a symbol",
            "relevant": ["gone/a", "coding/rename_symbol"],
        },
        {"qid": "lost", "query": "delete a bucket", "relevant": ["gone/b", "gone/a"]},
    ]
    queries.write_text("\n".join(json.dumps(row) for row in rows))
    code, text = run("catalog", "eval", str(catalog), str(queries), "--skip-unknown", "--k", "1")
    assert code == 0
    assert text.splitlines() == [
        "2 queries against 4 tools (k=1)",
        "2 relevant id(s) not in the catalogue skipped, e.g. gone/a, gone/b",
        "1 queries skipped: no visible expected tool",
        "R@1 1.000  R@10 1.000  MRR 1.000  nDCG@10 1.000  complete 1.000"
        "  (complete = every expected tool in the top 1)",
    ]


def test_k_above_ten_ranks_deeper(tmp_path: Path) -> None:
    """--k 20 reports R@20 and places an expected tool ranked below 10 by its rank."""
    records = [
        {
            "tool_id": f"files/tool_{index:02d}",
            "name": f"tool_{index:02d}",
            "path": ["Files"],
            "summary": "Copy a file" + " between folders" * (index // 5),
        }
        for index in range(25)
    ]
    catalog = tmp_path / "c.jsonl"
    catalog.write_text("\n".join(json.dumps(record) for record in records))
    queries = tmp_path / "q.json"
    queries.write_text(
        json.dumps([{"qid": "deep", "query": "copy file", "relevant": ["files/tool_24"]}])
    )
    code, shallow = run("catalog", "eval", str(catalog), str(queries), "--k", "10")
    assert code == 0
    assert "expected files/tool_24: not in the top 10" in shallow
    code, deep = run("catalog", "eval", str(catalog), str(queries), "--k", "50")
    assert code == 0
    lines = deep.splitlines()
    assert lines[0] == "1 queries against 25 tools (k=50)"
    assert lines[1].startswith("R@1 0.000  R@10 0.000  R@50 1.000  MRR ")
    assert lines[1].endswith(
        "nDCG@10 0.000  complete 1.000  (complete = every expected tool in the top 50)"
    )


def test_skip_unknown_with_nothing_left_reports_and_stops(tmp_path: Path) -> None:
    """When every relevant id is unknown, the counts are printed and no metric is."""
    catalog = tmp_path / "c.jsonl"
    catalog.write_text("\n".join(json.dumps(record) for record in RECORDS))
    queries = tmp_path / "q.json"
    queries.write_text(json.dumps([{"query": "anything", "relevant": ["gone/a"]}]))
    code, text = run("catalog", "eval", str(catalog), str(queries), "--skip-unknown")
    assert code == 0
    assert text.splitlines() == [
        "0 queries against 4 tools (k=5)",
        "1 relevant id(s) not in the catalogue skipped, e.g. gone/a",
        "1 queries skipped: no visible expected tool",
    ]
