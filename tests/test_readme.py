"""The README as a newcomer meets it: each Python snippet runs as a file of
its own in a fresh process and prints what it computes, and the number it
prints is the one the Python API gives."""

import os
import re
import subprocess
import sys
import warnings

import numpy as np
import pytest

README = os.path.join(os.path.dirname(__file__), os.pardir, "README.md")


def readme_snippets():
    with open(README, encoding="utf-8") as fh:
        return re.findall(r"```python\n(.*?)```", fh.read(), flags=re.S)


def run_snippet(code, tmp_path, name):
    path = tmp_path / f"{name}.py"
    path.write_text(code)
    done = subprocess.run([sys.executable, "-W", "error::UserWarning", str(path)],
                          capture_output=True, text=True, cwd=tmp_path, timeout=600)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_the_readme_has_the_snippets_this_test_knows():
    assert len(readme_snippets()) == 3


def test_routing_snippet_prints_the_test_ndcg_of_the_search(tmp_path):
    out = run_snippet(readme_snippets()[0], tmp_path, "routing")
    printed = float(out.strip().splitlines()[-1])
    import sklearn
    from sklearn.model_selection import GridSearchCV, GroupKFold
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from sklearn_ltr import LambdaMARTRanker
    from sklearn_ltr.datasets import load_example
    from sklearn_ltr.metrics import ndcg_score, ndcg_scorer

    (X, y, qid), (X_test, y_test, qid_test) = load_example()
    try:
        sklearn.set_config(enable_metadata_routing=True)
        search = GridSearchCV(
            make_pipeline(StandardScaler(), LambdaMARTRanker(random_state=0)),
            {"lambdamartranker__max_leaf_nodes": [15, 31]}, scoring=ndcg_scorer(10),
            cv=GroupKFold(5)).fit(X, y, qid=qid, groups=qid)
    finally:
        sklearn.set_config(enable_metadata_routing=False)
    assert printed == pytest.approx(
        ndcg_score(y_test, search.predict(X_test), qid=qid_test, k=10), abs=1e-12)


def test_column_snippet_prints_the_mean_cross_validated_ndcg(tmp_path):
    out = run_snippet(readme_snippets()[1], tmp_path, "column")
    printed = float(out.strip().splitlines()[-1])
    from sklearn.model_selection import GroupKFold, cross_val_score
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from sklearn_ltr import LambdaMARTRanker
    from sklearn_ltr.compose import exclude_qid
    from sklearn_ltr.datasets import load_example, to_frame
    from sklearn_ltr.metrics import ndcg_scorer

    (X, y, qid), _ = load_example()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        scores = cross_val_score(
            make_pipeline(exclude_qid(StandardScaler()), LambdaMARTRanker(random_state=0)),
            to_frame(X, qid), y, groups=qid, scoring=ndcg_scorer(10), cv=GroupKFold(5))
    assert printed == pytest.approx(np.mean(scores), abs=1e-12)


def test_the_saved_best_pipeline_gives_the_python_number_in_the_cli(tmp_path):
    pytest.importorskip("skops")
    out = run_snippet(readme_snippets()[2], tmp_path, "tuned")
    printed = out.strip().splitlines()[-1]
    assert re.fullmatch(r"NDCG@10 0\.\d{4}", printed)
    with open(README, encoding="utf-8") as fh:
        command = re.search(r"python -m sklearn_ltr (evaluate best\.ltr test\.txt --k 10)",
                            fh.read()).group(1)
    done = subprocess.run([sys.executable, "-m", "sklearn_ltr", *command.split()],
                          capture_output=True, text=True, cwd=tmp_path, timeout=600)
    assert done.returncode == 0, done.stderr
    assert "Pipeline(standardscaler -> lambdamartranker)" in done.stdout
    cli = re.search(r"^NDCG@10 +(0\.\d{4})$", done.stdout, flags=re.M).group(1)
    assert printed == f"NDCG@10 {cli}"


# -- what the README promises a fresh clone ---------------------------------------------

ROOT = os.path.join(os.path.dirname(__file__), os.pardir)


def readme_text():
    with open(README, encoding="utf-8") as fh:
        return fh.read()


def test_the_readme_lists_the_five_rankers():
    import inspect

    import sklearn_ltr

    rankers = {name for name in sklearn_ltr.__all__
               if inspect.isclass(getattr(sklearn_ltr, name)) and name.endswith("Ranker")}
    assert len(rankers) == 5
    bullet = re.search(r"^- \*\*Five rankers\*\*.*?(?=^- )", readme_text(), flags=re.M | re.S)
    assert bullet, "the 'What it is' list has no rankers item"
    assert set(re.findall(r"`(\w+Ranker)`", bullet.group(0))) == rankers
    assert not re.search(r"\bfour rankers\b", readme_text())


def cli_commands(text):
    """The ``python -m sklearn_ltr`` commands of the README, in order, with
    the variables of its bash blocks expanded: the lines of the bash blocks
    (continuations joined) and the commands quoted inline in the text."""
    commands = []
    for block in re.finditer(r"```bash\n(.*?)```", text, flags=re.S):
        variables = {}
        for n, line in enumerate(block.group(1).replace("\\\n", " ").splitlines()):
            line = line.split("#", 1)[0].strip()
            if m := re.fullmatch(r"(\w+)=(\S+)", line):
                variables[m.group(1)] = m.group(2)
            elif "python -m sklearn_ltr" in line:
                for name, value in variables.items():
                    line = line.replace(f"${name}", value)
                commands.append((block.start() + n, line))
    for inline in re.finditer(r"`(python -m sklearn_ltr [^`]*)`", text):
        commands.append((inline.start(), inline.group(1)))
    return [command for _, command in sorted(commands)]


def tracked_files():
    """The files a fresh clone has (git's index), or None without git."""
    try:
        done = subprocess.run(["git", "ls-files"], capture_output=True, text=True, cwd=ROOT,
                              timeout=60)
    except OSError:
        return None
    return set(done.stdout.split()) if done.returncode == 0 else None


def test_cli_examples_use_files_a_fresh_clone_has_or_an_earlier_command_writes():
    text = readme_text()
    commands = cli_commands(text)
    assert any(" fit " in f" {c} " for c in commands)
    tracked = tracked_files()
    # Files that the README's Python snippets write, in the order of the text.
    written = set(re.findall(r'"([\w.-]+\.(?:ltr|txt))"', "".join(readme_snippets())))
    for command in commands:
        args = command.split()[3:]
        for option, value in zip(args, args[1:]):
            if option in ("-o", "--output", "--per-query"):
                written.add(value)
        for i, arg in enumerate(args):
            if arg.startswith("-") or "=" in arg or (i and args[i - 1] in (
                    "-o", "--output", "--per-query", "--format", "--ranker", "--fold", "--k")):
                continue
            if not re.search(r"/|\.(gz|txt|ltr|query|model|json)$", arg):
                continue
            if arg in written:
                continue
            if tracked is not None:
                assert arg in tracked, f"{command}: {arg} is not in a fresh clone"
            else:
                assert os.path.exists(os.path.join(ROOT, arg)), f"{command}: no {arg}"


def test_the_cli_block_runs_from_the_repository_root(tmp_path):
    """The first bash block of "Command line and saved models", as a user
    runs it: from a checkout (here a link to the package), in order."""
    text = readme_text()
    section = text[text.index("## Command line and saved models"):]
    block = re.search(r"```bash\n(.*?)```", section, flags=re.S).group(1)
    os.symlink(os.path.abspath(os.path.join(ROOT, "sklearn_ltr")), tmp_path / "sklearn_ltr")
    done = subprocess.run(["bash", "-e", "-c", block], capture_output=True, text=True,
                          cwd=tmp_path, timeout=900)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "scores.txt").stat().st_size > 0
    assert re.search(r"^NDCG@10 ", done.stdout, flags=re.M)


def test_the_demo_table_has_the_models_the_demo_fits():
    """The README shows the demo's output: one row per model of
    sklearn_ltr/cli/demo.py (read from its source), then LightGBM's."""
    import ast

    with open(os.path.join(ROOT, "sklearn_ltr", "cli", "demo.py"), encoding="utf-8") as fh:
        tree = ast.parse(fh.read())
    (ours,) = [node for node in ast.walk(tree)
               if isinstance(node, ast.FunctionDef) and node.name == "_our_rankers"]
    (models,) = [node for node in ast.walk(ours) if isinstance(node, ast.Dict)]
    names = [key.value for key in models.keys]
    text = readme_text()
    table = re.search(r"^(model +trees.*?)\n\n", text, flags=re.S | re.M).group(1)
    rows = [re.split(r" {2,}", line)[0] for line in table.splitlines()[2:]]
    assert rows == names + ["LightGBM lambdarank"]
    for name in names:
        assert f"`{name}`" in text.split("\nmodel   ", 1)[0]
