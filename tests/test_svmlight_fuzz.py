"""Malformed svmlight/LETOR input: clear errors, and a fuzz test against a
reference parser.

The reference parser below is written from the format's grammar, line by
line in plain Python, independently of the library (which hands the parsing
to scikit-learn and checks around it). Whatever bytes it is fed, the library
must either return exactly what the reference returns, or raise a
ValueError naming the file when the reference rejects the input.
"""

import gzip
import io
import re

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from numpy.testing import assert_array_equal

from sklearn_ltr.datasets import load_svmlight_ranking, load_svmlight_ranking_files

NAME = "fuzz.svm"
MAX_INFERRED_N_FEATURES = 2**24


class Invalid(Exception):
    pass


def reference_parse(data, zero_based="auto", n_features=None):
    """(entries, shape, y, qid) of a ranking file, or Invalid.

    Grammar: lines split at b"\\n"; everything from the first '#' on is a
    comment; blank lines are skipped; otherwise whitespace-separated
    ``label qid:Q idx:val ...`` with ASCII only (no NUL), no underscores,
    the label a finite Python float, Q a Python int within int64, indices
    Python ints >= 0 (>= 1 if zero_based is False), strictly increasing,
    values Python floats. Indices are shifted down by one unless zero_based
    is True or ("auto" and some index is 0); without n_features the largest
    shifted index must be below 2**24.
    """
    rows, y, qid = [], [], []
    for line in data.split(b"\n"):
        content = line.split(b"#")[0]
        if any(b >= 128 or b == 0 for b in content) or b"_" in content:
            raise Invalid
        tokens = content.split()
        if not tokens:
            continue
        try:
            label = float(tokens[0])
            if len(tokens) < 2 or tokens[1][:4] != b"qid:":
                raise Invalid
            q = int(tokens[1][4:])
            features = {}
            previous = -1
            for token in tokens[2:]:
                index_text, colon, value_text = token.partition(b":")
                if not colon:
                    raise Invalid
                index, value = int(index_text), float(value_text)
                if index <= previous or (index == 0 and zero_based is False):
                    raise Invalid
                features[index] = value
                previous = index
        except ValueError:
            raise Invalid from None
        if not np.isfinite(label) or not -(2**63) <= q < 2**63:
            raise Invalid
        rows.append(features)
        y.append(label)
        qid.append(q)
    all_indices = [i for r in rows for i in r]
    if zero_based is True:
        shift = 0
    elif zero_based is False:
        shift = 1
    else:
        shift = 0 if 0 in all_indices else 1
    limit = MAX_INFERRED_N_FEATURES if n_features is None else n_features
    if any(i - shift >= limit for i in all_indices):
        raise Invalid
    if n_features is None:
        n_features = max(all_indices) + 1 - shift if all_indices else 0
    entries = [(r, i - shift, v) for r, row in enumerate(rows) for i, v in row.items()]
    return entries, (len(rows), n_features), np.array(y), np.array(qid, dtype=np.int64)


def _entries(X):
    coo = sp.coo_matrix(X)
    order = np.lexsort((coo.col, coo.row))
    return coo.row[order], coo.col[order], coo.data[order]


def check_against_reference(data, zero_based="auto", n_features=None):
    """The library's answer on ``data`` must be the reference's, or a ValueError."""
    buf = io.BytesIO(data)
    buf.name = NAME
    try:
        expected = reference_parse(data, zero_based, n_features)
    except Invalid:
        expected = None
    try:
        X, y, qid = load_svmlight_ranking(buf, zero_based=zero_based, n_features=n_features)
    except ValueError as exc:
        assert expected is None, f"valid input rejected: {exc}\n{data!r}"
        assert NAME in str(exc)
        return
    assert expected is not None, f"invalid input accepted:\n{data!r}"
    entries, shape, y_ref, qid_ref = expected
    assert X.shape == shape
    rows, cols, vals = _entries(X)
    ref = sorted(entries)
    assert_array_equal(rows, [e[0] for e in ref])
    assert_array_equal(cols, [e[1] for e in ref])
    assert_array_equal(vals, np.array([e[2] for e in ref], dtype=np.float64))
    assert_array_equal(y, y_ref)
    assert_array_equal(qid, qid_ref)
    assert qid.dtype == np.int64


# --------------------------------------------------------------------------- named errors

@pytest.mark.parametrize(
    "data, line, problem",
    [
        (b"1 qid:1 1:2\n# note\n0 qid:x7 1:1\n", 3, "qid 'x7' is not an integer"),
        (b"1 qid:1 1:2\n0 qidx:3 1:1\n", 2, "'qidx:3' is not a 'qid:<integer>' entry"),
        (b"1 qid:99999999999999999999 1:1\n", 1, "does not fit in a 64-bit integer"),
        (b"1 qid:1 1:2\nqid:1 1:2\n", 2, "the label is missing"),
        (b"1 qid:1 1:2\n\n1:3 2:2\n", 3, "the label is missing"),
        (b"x qid:1 1:2\n", 1, "label 'x' is not a number"),
        (b"1 qid:1 1:2\n\n# c\nnan qid:1 1:2\n", 4, "label nan is not a finite number"),
        (b"1 qid:1 2:1 2:3\n", 1, "feature index 2 appears twice"),
        (b"1 qid:1 3:1 2:3\n", 1, "feature index 2 comes after index 3"),
        (b"1 qid:1 1:1\n1 qid:1 99999999999:1\n", 2, "feature index 99999999999 is too large"),
        (b"1 qid:1 2147483647:1\n", 1, "feature index 2147483647 is larger than any real"),
        (b"1 qid:1 -1:3\n", 1, "feature index -1 is negative"),
        (b"1 qid:1 1:\xff\n", 1, "byte 0xff at column 11 is not ASCII"),
        (b"1 qid:1 1:2\x00\n", 1, "NUL byte at column 12"),
        (b"1 qid:1 abc\n", 1, "'abc' is not an 'index:value' pair"),
        (b"1 qid:1 x:1\n", 1, "feature index 'x' is not an integer"),
        (b"1 qid:1 1:abc\n", 1, "value 'abc' of feature 1 is not a number"),
        # int() and float() would read these as 10: no svmlight writer does.
        (b"1 qid:1 1:1_0\n", 1, "value '1_0' of feature 1 is not a number"),
        (b"1 qid:1_0 1:1\n", 1, "qid '1_0' is not an integer"),
        (b"1 qid:1 1:2 qid:3\n", 1, "'qid:3' comes after a feature"),
        (b"1 qid:1 1:2\n1 2:2\n", 2, "no 'qid:' entry, but other lines have one"),
    ],
)
def test_malformed_line_names_file_line_and_problem(tmp_path, data, line, problem):
    path = tmp_path / "bad.svm"
    path.write_bytes(data)
    with pytest.raises(ValueError) as info:
        load_svmlight_ranking(path)
    message = str(info.value)
    assert message.startswith(f"{path}, line {line}: ")
    assert problem in message
    # The reference parser agrees that the file is malformed.
    with pytest.raises(Invalid):
        reference_parse(data)


def test_index_checks_that_depend_on_options_name_the_line():
    data = b"1 qid:1 1:2\n# comment\n\n1 qid:1 0:2 7:1\n"
    with pytest.raises(ValueError, match="line 4: feature index 0 with zero_based=False"):
        load_svmlight_ranking(io.BytesIO(data), zero_based=False)
    with pytest.raises(ValueError, match="line 4: feature index 7 does not fit in n_features=5"):
        load_svmlight_ranking(io.BytesIO(data), n_features=5, zero_based=True)
    X, _, _ = load_svmlight_ranking(io.BytesIO(data), n_features=8)  # auto: 0 seen, zero-based
    assert_array_equal(X.toarray(), [[0, 2, 0, 0, 0, 0, 0, 0], [2, 0, 0, 0, 0, 0, 0, 1]])


def test_large_index_is_accepted_when_n_features_allows_it():
    data = b"1 qid:1 20000000:1.5\n"
    with pytest.raises(ValueError, match="pass n_features="):
        load_svmlight_ranking(io.BytesIO(data))
    X, _, _ = load_svmlight_ranking(io.BytesIO(data), n_features=20_000_000)
    assert X.shape == (1, 20_000_000) and X[0, 19_999_999] == 1.5


def test_error_in_second_file_names_that_file(tmp_path):
    good, bad = tmp_path / "train.svm", tmp_path / "test.svm"
    good.write_bytes(b"1 qid:1 1:2\n")
    bad.write_bytes(b"1 qid:1 1:2\n0 qid:2 1:2 1:3\n")
    with pytest.raises(ValueError, match=rf"^{bad}, line 2: feature index 1 appears twice"):
        load_svmlight_ranking_files([good, bad])


def test_non_utf8_comments_are_ignored_and_text_mode_decoding_errors_name_the_line():
    X, y, qid = load_svmlight_ranking(io.BytesIO(b"1 qid:4 2:0.5 # caf\xe9\n"))
    assert_array_equal(X.toarray(), [[0, 0.5]])
    text = io.TextIOWrapper(io.BytesIO(b"1 qid:1 1:2\n2 qid:1 1:2\n1 qid:1 1:\xff\n"),
                            encoding="utf-8")
    with pytest.raises(ValueError, match="line 3: the text is not valid utf-8"):
        load_svmlight_ranking(text)


def test_signed_and_extreme_qids_load_exactly():
    data = b"1 qid:-9223372036854775808 1:1\n1 qid:+007 2:1\n0 qid:9223372036854775807 1:3\n"
    _, _, qid = load_svmlight_ranking(io.BytesIO(data))
    assert_array_equal(qid, np.array([-(2**63), 7, 2**63 - 1], dtype=np.int64))
    check_against_reference(data)


def test_truncated_gzip_raises_value_error(tmp_path):
    path = tmp_path / "cut.svm.gz"
    payload = gzip.compress(b"".join(b"1 qid:%d 1:%d\n" % (i, i) for i in range(2000)))
    path.write_bytes(payload[: len(payload) // 2])
    with pytest.raises(ValueError, match=r"cut\.svm\.gz"):
        load_svmlight_ranking(path)


def test_bad_options_raise():
    with pytest.raises(ValueError, match="n_features must be a positive integer"):
        load_svmlight_ranking(io.BytesIO(b"1 qid:1 1:2\n"), n_features=0)
    with pytest.raises(ValueError, match="zero_based must be"):
        load_svmlight_ranking(io.BytesIO(b"1 qid:1 1:2\n"), zero_based="yes")


def test_float32_values_are_the_rounded_float64_parse():
    data = b"1 qid:1 1:0.1 2:3.4028236e38 3:1e-50\n"
    X, _, _ = load_svmlight_ranking(io.BytesIO(data), dtype=np.float32)
    assert X.dtype == np.float32
    with np.errstate(over="ignore"):
        expected = np.array([0.1, 3.4028236e38, 1e-50]).astype(np.float32)
    assert_array_equal(X.toarray()[0], expected)


# --------------------------------------------------------------------------- fuzzing

_FUZZ = settings(
    max_examples=250,
    deadline=None,
    derandomize=True,  # seeded: the same examples on every run
    suppress_health_check=[HealthCheck.too_slow],
)

_labels = st.integers(0, 19).flatmap(
    lambda k: st.sampled_from([b"nan", b"-inf", b"1e999"])  # not finite: invalid line
    if k == 0
    else st.one_of(
        st.integers(0, 4).map(lambda v: b"%d" % v),
        st.sampled_from([b"2.0", b"+1", b"1e0", b".5", b"-1", b"3.", b"0", b"12"]),
    )
)
_qids = st.one_of(
    st.integers(0, 50).map(lambda v: b"%d" % v),
    st.integers(-(2**63), 2**63 - 1).map(lambda v: b"%d" % v),
    st.sampled_from([b"+7", b"007", b"-0"]),
)
_values = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True).map(lambda v: repr(v).encode()),
    st.integers(-1000, 1000).map(lambda v: b"%d" % v),
    st.sampled_from([b"0.5", b"-1e-3", b"nan", b"inf", b"-Infinity", b"1E5", b"0", b".25"]),
)
_separators = st.sampled_from([b" ", b"  ", b"\t", b" \t"])


@st.composite
def _valid_lines(draw):
    """A data line that follows the grammar, with varied formatting."""
    sep = draw(_separators)
    indices = sorted(draw(st.sets(st.integers(0, 30), max_size=6)))
    tokens = [draw(_labels), b"qid:" + draw(_qids)]
    tokens += [b"%d:%s" % (i, draw(_values)) for i in indices]
    line = sep.join(tokens)
    if draw(st.booleans()):
        line += b" #" + draw(st.binary(max_size=8)).replace(b"\n", b" ")
    return line + draw(st.sampled_from([b"\n", b"\r\n", b" \n"]))


@st.composite
def _valid_files(draw):
    lines = draw(st.lists(
        st.one_of(_valid_lines(), st.sampled_from([b"\n", b"# header\n", b"   \n"])),
        max_size=6,
    ))
    return b"".join(lines)


_interesting_bytes = st.sampled_from(
    list(b"0123456789:#_ \t\n\r.-+eEqid") + [0, 0x80, 0xFF, 0xE9]
)


@st.composite
def _mutated_files(draw):
    data = bytearray(draw(_valid_files()))
    for _ in range(draw(st.integers(1, 3))):
        op = draw(st.sampled_from(["insert", "replace", "delete", "underscore", "qid"]))
        position = draw(st.integers(0, len(data)))
        if op == "underscore":
            # Between two digits of a label, index or value, where int() and
            # float() would accept it (qid tokens are checked separately).
            digits = [
                m.start() + i
                for m in re.finditer(rb"\S+", bytes(data)) if not m.group().startswith(b"qid")
                for i in range(1, len(m.group()))
                if m.group()[i - 1:i + 1].isdigit()
            ]
            if digits:
                position = digits[position % len(digits)]
                data[position:position] = b"_"
        elif op == "qid":
            spelling = draw(st.sampled_from([b"qidx:", b"qid=", b"QID:", b"qid :", b"qid::"]))
            data = bytearray(bytes(data).replace(b"qid:", spelling, 1))
        elif op == "insert":
            data[position:position] = bytes([draw(_interesting_bytes)])
        elif position < len(data):
            if op == "replace":
                data[position] = draw(_interesting_bytes)
            else:
                del data[position]
    return bytes(data)


_options = st.tuples(
    st.sampled_from(["auto", True, False]), st.sampled_from([None, None, 30, 31, 40])
)


@_FUZZ
@given(data=_valid_files(), options=_options)
def test_fuzz_valid_files_load_as_the_reference_reads_them(data, options):
    check_against_reference(data, *options)


@_FUZZ
@given(data=_mutated_files(), options=_options)
def test_fuzz_mutated_files_load_right_or_raise_value_error(data, options):
    check_against_reference(data, *options)


@_FUZZ
@given(data=st.binary(max_size=120))
def test_fuzz_random_bytes_load_right_or_raise_value_error(data):
    check_against_reference(data)
