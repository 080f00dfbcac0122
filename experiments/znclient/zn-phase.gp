# stvm-bench zn --phase-plot: the inversion's phase diagram. Reads `datafile` (the
# csv-wide export: case grid = one cell of the modelled world, seed = the fitted point,
# run = a real run) and writes `outfile`:
#   gnuplot -e "datafile='X.csv'; outfile='X.png'" bench/plots/zn-phase.gp
set datafile separator ','
set datafile commentschars '#'
set datafile columnheaders
set terminal pngcairo size 1100,800 noenhanced
set output outfile

is(name) = strcol("case") eq name
set title "A subscriber makes ZnClient faster only where a blocked read costs more than the subscriber adds\nsubscriber / logging-off requests per second, the modelled world around the seed's fit"
set xlabel 'what a blocked read costs: the wake-up after each OS sleep (us)'
set ylabel "the subscriber's work per event (us; three events per request)"
set cblabel 'subscriber / logging off (requests per second)'
set xrange [-10:610]
set yrange [-2:82]
set cbrange [0:4]
# Below 1 the subscriber only costs (blue); above 1 it wins (red): white is the edge.
set palette defined (0 '#2166ac', 1 '#f7f7f7', 2.5 '#ef8a62', 4 '#b2182b')
set key outside bottom center horizontal
plot datafile using (is("grid") ? column("wake_us") : NaN):(column("subscriber_cost_us")):(10):(2):(column("sub_over_off")) \
         with boxxyerror fs solid 1.0 noborder lc palette notitle, \
     datafile using (is("grid") && column("fits") > 0 ? column("wake_us") : NaN):(column("subscriber_cost_us")) \
         with points pt 7 ps 0.5 lc rgb 'black' title 'the seed fits (every figure within 15%)', \
     datafile using (is("seed") ? column("wake_us") : NaN):(column("subscriber_cost_us")) \
         with points pt 3 ps 3 lw 3 lc rgb '#000000' title "the seed's fitted world (ratio 2.5)", \
     datafile using (is("run") ? column("wake_us") : NaN):(column("subscriber_cost_us")) \
         with points pt 9 ps 2.5 lc rgb '#1b7837' title 'real runs on this machine (label: their ratio)', \
     datafile using (is("run") ? column("wake_us") : NaN):(column("subscriber_cost_us")):(sprintf(" %s: %.2f", strcol("label"), column("sub_over_off"))) \
         with labels left offset 1,0 font ',9' notitle
