"""The examples run end to end and print what the seed notebook shows."""

from __future__ import annotations

import os
import pathlib
import re
import subprocess
import sys

import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]


def run_example(name: str, workers: int, *args: str) -> str:
    result = subprocess.run(
        [sys.executable, str(ROOT / "examples" / name), *args],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "DNDASK_WORKERS": str(workers), "DNDASK_PROGRESS": "off"},
        cwd=ROOT,
    )
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    return result.stdout


def test_internals_tour_on_four_ranks():
    out = run_example("internals.py", 4)
    assert "a is distributed over 4 processes" in out
    assert "global shape (7, 4, 3)" in out
    for rank, lshape in enumerate(["(2, 4, 3)", "(2, 4, 3)", "(2, 4, 3)", "(1, 4, 3)"]):
        assert f"Rank {rank} holds a slice of DNDarray 'a' with local shape {lshape}" in out
    maps = [
        "tensor([[2, 4, 3],\n        [2, 4, 3],\n        [2, 4, 3],\n        [1, 4, 3]])",
        "tensor([[1, 4, 3],\n        [2, 4, 3],\n        [2, 4, 3],\n        [2, 4, 3]])",
        "tensor([[7, 1, 3],\n        [7, 1, 3],\n        [7, 1, 3],\n        [7, 1, 3]])",
    ]
    positions = [out.index(m) for m in maps]
    assert positions == sorted(positions)
    assert "split=None)" in out
    assert "split again: split=0, lshape_map=[[2, 4, 3], [2, 4, 3], [2, 4, 3], [1, 4, 3]]" in out
    assert "into shape (12, 4)" in out
    assert "B (Resplit A to axis=1): Split=1, lshape=(10, 1)" in out
    assert "C (Redistribute A): Split=0, lshape=(1, 4)" in out
    assert out.count("C (Redistribute A): Split=0, lshape=(3, 4)") == 3
    assert "A, B and C hold the same values: True" in out


def test_internals_tour_on_three_ranks():
    out = run_example("internals.py", 3)
    assert "a is distributed over 3 processes" in out
    assert "into shape (9, 4)" in out
    assert "A, B and C hold the same values: True" in out


def numbers_after(out: str, label: str) -> list[np.ndarray]:
    """The numbers on each printed line that starts with ``label``, in order."""
    return [
        np.array([float(v) for v in re.findall(r"-?\d+\.?\d*(?:e-?\d+)?", line[len(label) :])])
        for line in out.splitlines()
        if line.startswith(label)
    ]


def test_heat_ml_analysis_matches_scikit_learn(tmp_path):
    """The Heat-style analysis on the face, checked against scikit-learn on the same file."""
    from sklearn.cluster import KMeans
    from sklearn.linear_model import Lasso
    from sklearn.naive_bayes import GaussianNB
    from sklearn.preprocessing import StandardScaler

    code = (ROOT / "examples" / "heat_ml.py").read_text().split('"""', 2)[2]  # past the docstring
    # a Heat script: dndask is named in its import only
    assert [line for line in code.splitlines() if "dndask" in line] == ["import dndask.heat as ht"]
    data = tmp_path / "spheres.csv"
    out = run_example("heat_ml.py", 3, str(data))
    x = np.loadtxt(data, delimiter=",")
    assert x.shape == (200, 3)
    assert "data: shape (200, 3), split 0, 3 processes" in out

    scaler = StandardScaler().fit(x)
    z = scaler.transform(x)
    np.testing.assert_allclose(numbers_after(out, "scaler mean:")[0], scaler.mean_, atol=2e-6)
    np.testing.assert_allclose(numbers_after(out, "scaler var:")[0], scaler.var_, atol=2e-6)

    km = KMeans(n_clusters=4, n_init=10, random_state=0).fit(z)
    order = np.argsort(km.cluster_centers_[:, 0])
    centers = numbers_after(out, "center ")
    np.testing.assert_allclose([c[1:] for c in centers], km.cluster_centers_[order], atol=2e-6)
    (inertia,) = re.findall(r"k-means inertia: (\S+) after", out)
    assert float(inertia) == pytest.approx(km.inertia_, abs=2e-6)
    sizes = numbers_after(out, "cluster sizes:")[0]
    np.testing.assert_array_equal(sizes, np.bincount(km.labels_)[order])

    gnb = GaussianNB().fit(z, km.labels_)
    (accuracy,) = numbers_after(out, "GaussianNB training accuracy:")[0]
    assert accuracy == pytest.approx((gnb.predict(z) == km.labels_).mean(), abs=1e-4)
    variances = [v[1:] for v in numbers_after(out, "class ")]
    np.testing.assert_allclose(variances, gnb.var_[order], atol=2e-6)

    lasso = Lasso(alpha=0.05, tol=1e-12, max_iter=10000).fit(z[:, 1:], z[:, 0])
    theta = numbers_after(out, "lasso theta:")[0]
    np.testing.assert_allclose(theta, [lasso.intercept_, *lasso.coef_], atol=2e-6)
    mse = np.mean((z[:, 0] - lasso.predict(z[:, 1:])) ** 2)
    assert numbers_after(out, "lasso mean squared error:")[0][0] == pytest.approx(mse, abs=2e-6)
