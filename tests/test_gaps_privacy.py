"""Nothing secret is stored: a corpus of secret-bearing pastes, built from many forms of secret in many
places of a paste, recorded into the gap log; not one secret's bytes in any stored byte (the SQLite
database, its WAL and shared memory, a PostgreSQL table), in ``tbx gaps``'s clusters or in a draft.

The signature is an allow-list (:mod:`explainer.surfaces.gaps`): these pastes are not what it was written
against, they are what it must hold against."""

from __future__ import annotations

import json
import os
import unicodedata

import pytest

from explainer.match.explain import explain_text
from explainer.surfaces.gaps import Store, clusters, draft, record

# (what is written into the paste, the fragments that must never be stored)
SECRETS: list[tuple[str, list[str]]] = [
    ("PGPASSWORD=hunter2", ["hunter2"]),
    ("DB_PASSWORD=Xq9wLm2Z", ["Xq9wLm2Z"]),
    ("pass=qwertyuiop", ["qwertyuiop"]),
    ("MYSQL_PWD='tr0ub4dor&3'", ["tr0ub4dor"]),
    ("--password correcthorsebattery", ["correcthorsebattery"]),
    ('{"password": "Zx81vB!kk"}', ["Zx81vB"]),
    ("postgres://admin:Qz7pVt@db.acme-prod.com:5432/orders", ["Qz7pVt", "acme-prod", "orders"]),
    ("deploy:Kq7rT2pw@10.0.0.5", ["Kq7rT2pw", "10.0.0.5"]),
    ("https://oauth2:glpat-xY12zW34vU56tS78@gitlab.com/acme/nightingale.git", ["glpat-xY12", "nightingale"]),
    ("Cookie: sessionid=8f7e6d5c4b3a2910; csrftoken=Zz9Yy8Xx7Ww6", ["8f7e6d5c4b3a2910", "Zz9Yy8Xx7Ww6"]),
    ("sk_live_51HqLyjWDarjtT1zdp7dcXYZ", ["sk_live_51HqLyj", "51HqLyjWDarjtT1zdp7dcXYZ"]),
    ("sk-proj-Ab12Cd34Ef56Gh78Ij90Kl", ["Ab12Cd34Ef56Gh78Ij90Kl"]),
    ("xoxb-1234567890-abcdefghijkl", ["1234567890-abcdefghijkl"]),
    ("AKIAIOSFODNN7EXAMPLE", ["AKIAIOSFODNN7EXAMPLE"]),
    ("ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8", ["A1b2C3d4E5f6G7h8I9j0"]),
    ("hf_aBcDeFgHiJkLmNoPqRsTuVwXyZ123456", ["aBcDeFgHiJkLmNoPqRsTuVwXyZ"]),
    ("AIzaSyA1b2C3d4E5f6G7h8I9j0kLmN", ["AIzaSyA1b2C3d4E5f6G7h8I9j0kLmN"]),
    ("Bearer abcdef1234567890abcdef", ["abcdef1234567890abcdef"]),
    (
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
        ["eyJhbGciOiJIUzI1NiJ9"],
    ),
    ("-----BEGIN RSA PRIVATE KEY----- MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo", ["MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo"]),
    ("zhang.wei@example-lab.cn", ["zhang.wei", "example-lab"]),
    ("ｌｉ．ｎａ＠ｅｘａｍｐｌｅ．ｃｏｍ", ["li.na", "ｌｉ．ｎａ", "example.com"]),
    ("王小明", ["王小明"]),
    ("陈静怡", ["陈静怡"]),
    ("Jürgen Müller", ["Jürgen", "Müller"]),
    ("/home/liuyang/projects/secret_model/train.py", ["liuyang", "secret_model"]),
    ("/Users/Mary Smith/Documents/my thesis/model.py", ["Mary Smith", "my thesis"]),
    ("C:\\Users\\wangfang\\Desktop\\data.csv", ["wangfang"]),
    ("D:\\工作\\李雷\\train.py", ["李雷"]),
    ("acme_fraud_detector.py", ["acme_fraud_detector"]),
    ("customer_churn_v2.ckpt", ["customer_churn"]),
    ("project_nightingale", ["nightingale"]),
    ("10.12.0.7", ["10.12.0.7"]),
    ("fe80::1ff:fe23:4567:890a", ["fe80::1ff:fe23"]),
    ("gpu-node-17.cluster.internal", ["gpu-node-17"]),
    ("ml-train-03.corp.acme.com", ["ml-train-03", "acme.com"]),
    ("+86 138 0013 8000", ["138 0013 8000"]),
    ("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl", ["AAAAC3NzaC1lZDI1NTE5"]),
]
# where in a paste a secret can stand; {s} is the secret
PLACES = [
    "RuntimeError: failed to reach the store with {s} while loading",
    "ValueError: invalid configuration value {s}",
    "OSError: [Errno 2] No such file or directory: '{s}'",
    'Traceback (most recent call last):\n  File "/srv/app/run.py", line 3, in <module>\n    connect("{s}")\n'
    "RuntimeError: quantized engine QNNPACK failed for {s}",
    "运行时错误：连接 {s} 失败，无法加载数据",
]
# a user's own exception types name their project
USER_TYPES = [
    ("AcmeQuotaExceededError", ["AcmeQuota"]),
    ("nightingale.errors.PatientDataError", ["nightingale", "PatientData"]),
    ("HospitalRecordError", ["HospitalRecord"]),
]


def corpus() -> list[tuple[str, list[str]]]:
    out = [(place.format(s=secret), frags) for secret, frags in SECRETS for place in PLACES]
    out += [(f"{t}: the batch could not be processed", frags) for t, frags in USER_TYPES]
    out += [
        (f'Traceback (most recent call last):\n  File "/x/y.py", line 1, in <module>\n{t}: {s}', frags + tf)
        for (t, tf), (s, frags) in zip(USER_TYPES, SECRETS)
    ]
    # an e-mail address cut at the length limit the signature reads
    from explainer.surfaces.gaps import MAX_MESSAGE

    for cut in range(-12, 12, 4):
        pad = "x " * ((MAX_MESSAGE * 4 + cut) // 2)
        out.append((f"RuntimeError: {pad}zhang.wei@example-lab.cn tail", ["zhang.wei", "zhang", "example-lab"]))
    return out


def _clean(blob: bytes, cases) -> list[str]:
    low = blob.lower()
    found = []
    for _text, frags in cases:
        for f in frags:
            for form in {f, unicodedata.normalize("NFKC", f)}:
                if form.lower().encode() in low:
                    found.append(form)
    return sorted(set(found))


def test_the_corpus_is_large_and_mostly_recorded(tmp_path, index):
    cases = corpus()
    assert len(cases) >= 100
    store = Store(path=str(tmp_path / "g.sqlite"), url="")
    recorded = sum(record(explain_text(text, index), text, store) for text, _ in cases)
    store.close()
    assert recorded >= 0.8 * len(cases), recorded  # what is not recorded is an answer, not a gap


def test_no_secret_reaches_any_stored_byte_in_sqlite(tmp_path, index):
    cases = corpus()
    store = Store(path=str(tmp_path / "g.sqlite"), url="")
    for text, _ in cases:
        record(explain_text(text, index), text, store)
    rows = store.rows()  # read before closing: the WAL still holds what was written
    blob = b"".join(p.read_bytes() for p in tmp_path.iterdir())
    found = clusters(rows)
    shown = json.dumps({"rows": rows, "clusters": found}, ensure_ascii=False) + "".join(draft(c) for c in found)
    store.close()
    assert rows
    assert not _clean(blob, cases)
    assert not _clean(shown.encode(), cases)


def test_no_secret_reaches_postgresql(index):
    url = os.environ.get("TBX_TEST_POSTGRES")
    if not url:
        pytest.skip("no PostgreSQL server: set TBX_TEST_POSTGRES=postgresql://... (.ci/run starts one)")
    psycopg = pytest.importorskip("psycopg")
    try:
        psycopg.connect(url, connect_timeout=3).close()
    except Exception as exc:  # noqa: BLE001
        pytest.skip(f"PostgreSQL at TBX_TEST_POSTGRES does not answer: {exc}")
    with psycopg.connect(url, autocommit=True) as con:
        con.execute("drop table if exists gaps")
    cases = corpus()
    store = Store(url=url)
    for text, _ in cases:
        record(explain_text(text, index), text, store)
    store.close()
    with psycopg.connect(url) as con:
        dump = "\n".join(repr(r) for r in con.execute("select * from gaps").fetchall())
    assert dump and not _clean(dump.encode(), cases)


def test_what_torch_wrote_is_kept(index):
    """The allow-list keeps the words a maintainer needs to curate the gap."""
    from explainer.surfaces.gaps import allowed_type, redact

    got = redact(
        "Given groups=1, weight of size [64, 3, 7, 7], expected input[8, 1, 224, 224] to have 3 channels", index
    )
    assert "weight of size" in got and "channels" in got, got
    assert allowed_type("RuntimeError", index) == "RuntimeError"
    assert allowed_type("torch.OutOfMemoryError", index) == "torch.OutOfMemoryError"
    assert allowed_type("AcmeQuotaExceededError", index) == "<type>"
