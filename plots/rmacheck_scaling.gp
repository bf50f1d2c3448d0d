# rmacheck_scaling.gp — rmacheck's scaling benchmark (docs/rmacheck.md "Scaling"): time and log
# size vs the number of loads and stores of the program (scaling.c, 2 ranks), log-log.
# Run by plot.py: gnuplot -e "datadir='DIR'; out='STEM'; term='png|pdf'; mpi='...'" rmacheck_scaling.gp
# Data: datadir/rmacheck_scaling.dat; columns accesses, native_s, rmacheck_s, program_s,
# analysis_s, log_bytes.
if (term eq 'pdf') { set terminal pdfcairo noenhanced size 10in,4.2in font ',10' } \
else { set terminal pngcairo noenhanced size 1200,500 font ',11' }
set output out.'.'.term
datafile = datadir.'/rmacheck_scaling.dat'
set multiplot layout 1,2 title 'rmacheck scaling ('.mpi.', 2 ranks): a put and two fences per iteration, then every window int loaded and zeroed'
set grid
set logscale xy
set format x '10^%T'
set xlabel 'loads and stores of the program'
set key top left
set ylabel 'seconds (median)'
set title 'run time'
plot datafile using 1:2 with linespoints lw 2 pt 7 title 'native', \
     '' using 1:3 with linespoints lw 2 pt 5 title 'rmacheck (whole run)', \
     '' using 1:4 with linespoints lw 2 pt 9 dt 2 title 'program under rmacheck', \
     '' using 1:5 with linespoints lw 2 pt 11 dt 3 title 'analysis', \
     '' using 1:($2 * 10) with lines lw 1 dt 4 lc rgb 'gray40' title '10 x native'
set ylabel 'bytes'
set title 'log size (all ranks)'
plot datafile using 1:6 with linespoints lw 2 pt 7 title 'log bytes'
unset multiplot
