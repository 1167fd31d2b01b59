"""A climate analysis on a labelled, distributed field: time x lat x lon.

1. make a synthetic daily temperature field, split by time (each rank its days);
2. write it to netCDF in parallel (coordinates and attributes too) and load it
   back, each rank reading its own days; xarray reads the file back identical;
3. compute the monthly climatology and the anomalies, still split by time;
4. one year's weekly means (resample) and 31-day running mean (rolling): xarray changes
   the chunks, ``.dnd.conform()`` brings them back to one chunk per rank, and
   xarray's own ``.persist()`` keeps chunk r on rank r; the layout is checked
   after each step;
5. resplit to space (each rank a band of latitudes with all the days) and fit a
   per-point warming trend, which is then local to each rank;
6. plot the climatology and the trend map to a PNG.

Run:  python examples/climate.py [output.png]   (default: a temporary folder)
"""

from __future__ import annotations

import argparse
import os
import tempfile

import matplotlib
import numpy as np
import pandas as pd
import xarray as xr

import dndask as ht

matplotlib.use("Agg")  # no display needed
import matplotlib.pyplot as plt  # after choosing the backend

YEARS, LAT, LON = 4, 18, 36


def synthetic_field() -> xr.DataArray:
    """Daily temperatures: a seasonal cycle, a warming that grows towards the poles, noise."""
    time = pd.date_range("2000-01-01", periods=365 * YEARS, freq="D")
    lat = np.linspace(-85.0, 85.0, LAT)
    lon = np.arange(0.0, 360.0, 360.0 / LON)
    ht.random.seed(7)
    noise = ht.random.randn(len(time), LAT, LON, split=0)  # made on each rank, for its days
    field = noise.to_xarray(
        dims=("time", "lat", "lon"),
        coords={"time": time, "lat": lat, "lon": lon},
        name="temperature",
    )
    years = xr.DataArray((time - time[0]).days / 365.25, dims="time", coords={"time": time})
    day = xr.DataArray(time.day_of_year, dims="time", coords={"time": time})
    band = np.deg2rad(field.lat)
    seasonal = -12.0 * np.sin(band) * np.cos(2 * np.pi * (day - 15) / 365.25)
    warming = (0.02 + 0.06 * (field.lat / 90.0) ** 2) * years  # K per year
    # xarray broadcasts the in-memory signal against the Dask data: still split by time
    signal = 28.0 * np.cos(band) - 12.0 + seasonal + warming
    return (signal + 0.4 * field).transpose("time", "lat", "lon")


def describe(label: str, x: xr.DataArray) -> None:
    print(f"{label}: dims={x.dims}, split={x.dnd.split}, lshape_map={x.dnd.lshape_map.tolist()}")


def check_layout(label: str, x: xr.DataArray) -> bool:
    """Print whether ``x`` is one chunk per rank along its split dimension, one along the others."""
    chunks = x.data.chunks
    axis = x.dims.index(x.dnd.split)
    ranks = x.dnd.comm.size
    whole = all(len(c) == 1 for i, c in enumerate(chunks) if i != axis)
    ok = len(chunks[axis]) == ranks and whole
    print(f"{label}: split={x.dnd.split}, {len(chunks[axis])} chunks on {ranks} ranks, ok={ok}")
    return ok


def per_point_trend(anomalies: xr.DataArray) -> xr.DataArray:
    """Least-squares slope over time at every grid point, in K per decade."""
    years = (anomalies.time - anomalies.time[0]).dt.days / 365.25
    centred = years - years.mean()
    return 10.0 * (anomalies * centred).sum("time") / (centred**2).sum()


def plot(climatology: xr.DataArray, trend: xr.DataArray, path: str) -> None:
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4), constrained_layout=True)
    zonal = climatology.mean("lon").transpose("lat", "month")
    mesh = left.pcolormesh(zonal.month, zonal.lat, zonal, cmap="RdBu_r", shading="auto")
    left.set(title="Climatology (zonal mean)", xlabel="month", ylabel="latitude")
    fig.colorbar(mesh, ax=left, label="°C")
    trend = trend.transpose("lat", "lon")
    mesh = right.pcolormesh(trend.lon, trend.lat, trend, cmap="magma", shading="auto")
    right.set(title="Warming trend", xlabel="longitude", ylabel="latitude")
    fig.colorbar(mesh, ax=right, label="K / decade")
    fig.savefig(path, dpi=80)
    plt.close(fig)


def netcdf_round_trip(field: xr.DataArray, path: str) -> xr.DataArray:
    """Parallel I/O: every rank writes its own days, then reads them back on its worker."""
    field = field.rename("temperature").assign_attrs(units="degC")
    ht.save_netcdf(field, path)  # the data by the ranks, coordinates and attributes by xarray
    with xr.open_dataset(path) as ds:
        read = ds["temperature"]
        same = read.coords.equals(field.coords) and read.attrs == field.attrs
        print(f"netCDF read by xarray: coords and attrs identical={same}")
    loaded = ht.load_netcdf(path, "temperature", split="time").persist()
    t = loaded.to_xarray(dims=field.dims, coords=field.coords, name="temperature")
    describe("loaded from netCDF", t)
    return t


def layout_breaking_steps(anomalies: xr.DataArray) -> None:
    """sel, resample and rolling change the chunks; conform brings back one chunk per rank."""
    year = anomalies.sel(time="2001").dnd.conform()  # one year: the days of two ranks only
    check_layout("one year, conformed", year)
    weekly = year.resample(time="7D").mean()
    print(f"weekly means: {len(weekly.data.chunks[0])} chunks along time (one per week)")
    weekly = weekly.dnd.conform().persist()  # xarray's own persist: chunk r on rank r
    check_layout("weekly means, conformed", weekly)
    smooth = year.rolling(time=31, center=True, min_periods=1).mean().dnd.conform("time")
    check_layout("31-day running mean, conformed", smooth)


def analyse(t: xr.DataArray, output: str) -> None:
    """Climatology and anomalies split by time; the per-point trend split by space."""
    climatology = t.groupby("time.month").mean("time").compute()
    print(f"climatology: dims={climatology.dims}, {climatology.nbytes} bytes in the driver")
    anomalies = t.groupby("time.month") - climatology
    print(f"anomalies: {len(anomalies.data.chunks[0])} chunks along time (xarray's groupby)")
    anomalies = anomalies.dnd.conform()  # one chunk per rank again, on the same ranks
    describe("anomalies", anomalies)
    check_layout("anomalies, conformed", anomalies)
    layout_breaking_steps(anomalies)

    space = anomalies.dnd.resplit("lat").dnd.persist()  # each rank: some latitudes, all days
    describe("resplit to space", space)
    trend = per_point_trend(space)
    describe("trend", trend)
    trend = trend.compute()

    zonal = trend.mean("lon")
    print(
        f"trend (K/decade): equator {float(zonal.sel(lat=0, method='nearest')):.2f}, "
        f"poles {float(zonal.isel(lat=[0, -1]).mean()):.2f}"
    )
    plot(climatology, trend, output)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("output", nargs="?", help="PNG to write (default: a temporary folder)")
    args = parser.parse_args()
    output = args.output or os.path.join(tempfile.mkdtemp(prefix="dndask-climate-"), "climate.png")

    field = synthetic_field()
    describe("field", field)
    with tempfile.TemporaryDirectory() as folder:
        t = netcdf_round_trip(field, os.path.join(folder, "temperature.nc"))
        analyse(t, output)
    print(f"wrote {output}")


if __name__ == "__main__":
    main()
