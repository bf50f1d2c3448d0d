# a2_early_transfer.gp — A2 figure (paper 000 §VIII-A, Figs. 2-11 style): median µs of the measured
# quantities, one bar per series (vendor, ref, ref-nb) in each group.
# Run by plot.py: gnuplot -e "datadir='DIR'; out='STEM'; term='png|pdf'; ncol=N; mpi='NAME';
# unit='µs|ms'; delay=D; cond='conditions'" X.gp
# Data: datadir/a2_early_transfer.dat; column 1 quantity (and size), then one column per bar.
if (term eq 'pdf') { set terminal pdfcairo noenhanced size 8in,4.8in font ',10' } \
else { set terminal pngcairo noenhanced size 1000,600 font ',11' }
set output out.'.'.term
# The conditions of the measurement (plot.py: MPI library, QUICK, oversubscribed, load average)
cond_line = ''
if (!exists('unit')) { unit = 'µs' }
if (exists('cond')) { if (strlen(cond) > 0) { cond_line = "\n".cond } }
set grid ytics
set key outside right top
set title sprintf('A2: Early Transfer — origin, target posts D late (%s, median)', mpi) . cond_line
set ylabel sprintf('time (%s)', unit)
# propagated delays can be negative (noise): plot.py then sets ymin
if (exists('ymin')) { set yrange [ymin:*]; set xzeroaxis lt -1 } else { set yrange [0:*] }
set style data histograms
# No empty slot before the first bar group or after the last (plot.py passes the row count).
if (exists('nrow')) { set xrange [-0.5:nrow-0.5] }
set style histogram clustered gap 1
set xtics nomirror rotate by 20 right
set style fill solid 0.8 border -1
# The injected delay D as a dashed line (plot.py sets `delay` when the results hold one D):
# what to read each bar against, as paper 000's figures do.
if (exists('delay')) {
    plot for [i=2:ncol] datadir.'/a2_early_transfer.dat' using i:xtic(1) title columnheader(i), \
         delay with lines dt 2 lw 2 lc rgb 'black' title sprintf('injected delay D = %g %s', delay, unit)
} else {
    plot for [i=2:ncol] datadir.'/a2_early_transfer.dat' using i:xtic(1) title columnheader(i)
}
