# stvm-bench zn --plot: requests per second (top) and blocked first reads per request
# (bottom) against the subscriber's cost per event, one line per idle mode and quantum
# (and per other knob given more than one value), with the same configuration's
# logging-off rate dashed. Reads `datafile` (the csv-wide export: one row per record,
# columns by name) and writes `outfile`:
#   gnuplot -e "datafile='X.csv'; outfile='X.png'" bench/plots/zn.gp
set datafile separator ','
set datafile commentschars '#'
set datafile columnheaders
set terminal pngcairo size 1100,800 noenhanced
set output outfile

is(name) = strcol("case") eq name
knob(key, def) = strcol(key) eq def || strcol(key) eq "" ? "" : "-".key."=".strcol(key)
# A configuration without its logging and subscriber knobs; a line adds the events.
base(x) = strcol("idle_mode")."-".strcol("idle_us")."us".knob("wake_inject_us", "0") \
    .knob("before_us", "0").knob("between_us", "0").knob("after_us", "0") \
    .knob("wait", "timed").knob("background", "off")
line(x) = base(0).knob("subscriber_events", "all")

# One pass: the lines (words of `lines`) and each base's logging-off rate (`offs`).
lines = " "
offs = "|"
stats datafile using (is("subscriber") && strstrt(lines, " ".line(0)." ") == 0 ? \
    lines = lines.line(0)." " : 0, is("off") ? \
    offs = offs.base(0)."=".sprintf("%.17g", column("requests_per_second"))."|" : 0, 0) nooutput
from(s, p) = s[p:strlen(s)]
offat(p) = p ? real(from(offs, p)[1:strstrt(from(offs, p), "|") - 1]) : NaN
off_rps(b) = offat(strstrt(offs, "|".b."=") ? strstrt(offs, "|".b."=") + strlen(b) + 2 : 0)

set multiplot layout 2,1 title "A subscriber beats logging off (dashed) only where a blocked read is dear (legacy: a blind 1 ms sleep);\nwhere blocking is cheap (poll, spin) it only costs. ZnClient GETs from a local nginx, medians; grey: the seed's figures"
set xlabel 'subscriber cost per event (us)'
set key outside right
set grid
set lmargin at screen 0.10
set rmargin at screen 0.66
set yrange [0:*]
set ylabel 'requests per second (1/s)'
# The seed's figures as reference marks: logging off about 3,000/s, on about 2,500/s,
# on with the GT inspector subscribed 7,000-8,000/s.
set object 1 rect from graph 0, first 7000 to graph 1, first 8000 fc rgb '#d9d9d9' fs solid 0.6 noborder behind
set arrow 1 from graph 0, first 3000 to graph 1, first 3000 nohead dt 3 lw 2 lc rgb '#555555'
set arrow 2 from graph 0, first 2500 to graph 1, first 2500 nohead dt 3 lw 1 lc rgb '#999999'
set label 1 "seed, subscribed: 7,000-8,000/s" at graph 0.55, first 7500 front font ',9'
set label 2 "seed, logging off: 3,000/s (on: 2,500/s)" at graph 0.55, first 3000 offset 0,0.7 front font ',9'
plot for [i=1:words(lines)] datafile \
         using (is("subscriber") && line(0) eq word(lines, i) ? \
                column("subscriber_cost_us") : NaN):(column("requests_per_second")) \
         smooth unique with linespoints lw 2 lc i title word(lines, i), \
     for [i=1:words(lines)] datafile \
         using (is("subscriber") && line(0) eq word(lines, i) ? \
                column("subscriber_cost_us") : NaN):(off_rps(base(0))) \
         smooth unique with lines dt 2 lc i title word(lines, i).", logging off"
unset object 1
unset arrow 1
unset arrow 2
unset label 1
unset label 2
set ylabel 'blocked first reads per request (0..1)'
plot for [i=1:words(lines)] datafile \
         using (is("subscriber") && line(0) eq word(lines, i) ? \
                column("subscriber_cost_us") : NaN):(column("blocked_first_reads_per_request")) \
         smooth unique with linespoints lw 2 lc i title word(lines, i)
unset multiplot
