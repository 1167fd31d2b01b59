"""A Heat machine-learning analysis, written as a Heat user writes it, run on dndask's face.

1. make Heat's four-ball test data (``ht.utils.data.spherical``), write it to CSV and load
   it back split along the samples, as a script reading its data file does;
2. scale the features (``ht.preprocessing.StandardScaler``);
3. cluster them (``ht.cluster.KMeans``, k-means++ with a fixed ``random_state``);
4. learn the clusters back with a classifier (``ht.naive_bayes.GaussianNB``);
5. predict the first feature from the other two (``ht.regression.Lasso``, Heat's
   convention: column 0 of ``x`` is the intercept's).

Only the import names dndask: with ``import heat as ht`` the script is a Heat script.

Run:  python examples/heat_ml.py [data.csv]   (default: a temporary file; an existing
file is read instead of written)
"""

from __future__ import annotations

import argparse
import os
import tempfile

import dndask.heat as ht


def load(path: str) -> ht.DNDarray:
    """The data in ``path``; Heat's four balls (50 points each per rank) written there first."""
    if not os.path.exists(path):
        data = ht.utils.data.spherical.create_spherical_dataset(
            num_samples_cluster=50 * ht.get_comm().size, radius=1.5, offset=3.0,
            dtype=ht.float64, random_state=7,
        )  # fmt: skip
        ht.save_csv(data, path)
    return ht.load_csv(path, sep=",", dtype=ht.float64, split=0)


def main(path: str) -> None:
    x = load(path)
    print(f"data: shape {x.shape}, split {x.split}, {x.comm.size} processes")

    # 2. features with mean 0 and variance 1
    scaler = ht.preprocessing.StandardScaler()
    z = scaler.fit_transform(x)
    print("scaler mean:", " ".join(f"{v:.6f}" for v in scaler.mean_.numpy()))
    print("scaler var:", " ".join(f"{v:.6f}" for v in scaler.var_.numpy()))

    # 3. four clusters; centers listed in order of their first coordinate
    kmeans = ht.cluster.KMeans(n_clusters=4, init="probability_based", random_state=3)
    kmeans.fit(z)
    centers = kmeans.cluster_centers_
    order = ht.argsort(centers[:, 0]).numpy()
    for i in order:
        print(f"center {int(i)}:", " ".join(f"{v:.6f}" for v in centers[int(i)].numpy()))
    print(f"k-means inertia: {float(kmeans.inertia_):.6f} after {kmeans.n_iter_} iterations")
    labels = kmeans.labels_.squeeze()  # Heat's labels are a column
    sizes = [int((labels == int(i)).sum()) for i in order]
    print("cluster sizes:", " ".join(str(s) for s in sizes))

    # 4. a Gaussian naive Bayes classifier of the clusters
    gnb = ht.naive_bayes.GaussianNB().fit(z, labels)
    accuracy = float((gnb.predict(z) == labels).sum()) / z.shape[0]
    print(f"GaussianNB training accuracy: {accuracy:.4f}")
    for i in order:
        print(f"class {int(i)} variance:", " ".join(f"{v:.6f}" for v in gnb.var_[int(i)].numpy()))

    # 5. the first feature from the other two, with an intercept column
    ones = ht.ones((z.shape[0], 1), dtype=z.dtype, split=0)
    design = ht.concatenate((ones, z[:, 1:]), axis=1)
    lasso = ht.regression.Lasso(lam=0.05, max_iter=500, tol=1e-10)
    lasso.fit(design, z[:, 0])
    theta = lasso.theta.numpy().ravel()
    print("lasso theta:", " ".join(f"{v:.6f}" for v in theta))
    residual = z[:, 0] - lasso.predict(design).squeeze()
    print(f"lasso mean squared error: {float((residual**2).mean()):.6f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", nargs="?", help="CSV file (written first if it does not exist)")
    args = parser.parse_args()
    if args.data:
        main(args.data)
    else:
        with tempfile.TemporaryDirectory() as tmp:
            main(os.path.join(tmp, "spheres.csv"))
