#!/bin/sh
# SPDX-License-Identifier: MIT
# Plots the learning curves a trainer writes (curves.csv of tpu_report::CurveLog: epoch,
# train_loss, train_accuracy, test_loss, test_accuracy, seconds, samples_per_second) as a PNG with
# two panels, loss and accuracy per epoch, train and test. Runs on the host (gnuplot-nox; the
# guest has no gnuplot), for the CPU trainer's curves now and the card trainer's later.
#   plot-curves.sh CURVES.csv OUT.png [TITLE]
set -eu
[ $# -ge 2 ] || { echo "usage: plot-curves.sh CURVES.csv OUT.png [TITLE]" >&2; exit 2; }
csv=$1
png=$2
title=${3:-$csv}
command -v gnuplot >/dev/null || { echo "plot-curves: no gnuplot (package gnuplot-nox)" >&2; exit 1; }
[ -r "$csv" ] || { echo "plot-curves: cannot read $csv" >&2; exit 1; }
head -n 1 "$csv" | grep -q '^epoch,train_loss,train_accuracy,test_loss,test_accuracy' ||
	{ echo "plot-curves: $csv is not a curves.csv (header: epoch,train_loss,train_accuracy,test_loss,test_accuracy,...)" >&2; exit 1; }
rows=$(($(wc -l < "$csv") - 1))
[ "$rows" -ge 1 ] || { echo "plot-curves: $csv has no epochs yet" >&2; exit 1; }
xtics=
[ "$rows" -gt 20 ] || xtics='set xtics 1'
gnuplot <<GNUPLOT
set terminal pngcairo size 1200,500 noenhanced
set output '$png'
set datafile separator ','
set key autotitle columnhead
set multiplot layout 1,2 title '$title'
set xlabel 'epoch'
$xtics
set grid
set title 'loss'
plot '$csv' using 1:2 with linespoints title 'train', '' using 1:4 with linespoints title 'test'
set title 'accuracy (%)'
set key bottom right
plot '$csv' using 1:(100*\$3) with linespoints title 'train', '' using 1:(100*\$5) with linespoints title 'test'
unset multiplot
GNUPLOT
echo "plot-curves: $png ($rows epochs)"
