#!/bin/bash
# usage: run.sh fio-X.Y  -- runs benchmark jobs with /tmp/oldfio/<ver>/fio
set -u
V=$1
FIO=/tmp/oldfio/$V/fio
OUT=/tmp/oldfio/out/$V
mkdir -p $OUT /tmp/oldfio/work
WD=$(mktemp -d /tmp/oldfio/work/$V.XXXXXX)
CMDS=$OUT/commands.txt
: > $CMDS
echo "# $($FIO --version)  workdir=$WD  kernel=$(uname -r)" >> $CMDS

mkjob() { # name
  local n=$1 d=$WD/$1
  mkdir -p $d
  case $n in
  groups) cat > $OUT/groups.fio <<J
[global]
ioengine=psync
direct=0
size=8m
bs=4k
runtime=1
time_based=1
numjobs=2
directory=$d

[randread-group]
rw=randread

[randwrite-group]
stonewall
rw=randwrite
J
  ;;
  grouped) cat > $OUT/grouped.fio <<J
[global]
ioengine=psync
direct=0
size=8m
bs=64k
rw=read
runtime=1
time_based=1
numjobs=2
group_reporting=1
directory=$d

[first]
numjobs=2

[second]
numjobs=1
J
  ;;
  randrw) cat > $OUT/randrw.fio <<J
[global]
ioengine=psync
direct=0
size=8m
bs=4k
runtime=1
time_based=1
numjobs=1
directory=$d

[randrw]
rw=randrw
rwmixread=70
J
  ;;
  esac
}

run() { # jobname, outfile-or-"-", extra args...
  local n=$1 o=$2; shift 2
  rm -rf $WD/$n/*   # fresh data files for every run
  (cd $WD && if [ "$o" = "-" ]; then
       echo "cd $WD && $FIO $* $OUT/$n.fio > $OUT/${n}_normal.txt 2> $OUT/${n}_normal.stderr" >> $CMDS
       $FIO "$@" $OUT/$n.fio > $OUT/${n}_normal.txt 2> $OUT/${n}_normal.stderr
     else
       echo "cd $WD && $FIO $* --output=$OUT/$o $OUT/$n.fio" >> $CMDS
       $FIO "$@" --output=$OUT/$o $OUT/$n.fio 2> $OUT/$o.stderr
     fi; echo "  rc=$?" >> $CMDS)
}

COMBINED=$2   # yes if normal,json supported
for n in groups grouped randrw; do
  mkjob $n
  if [ "$COMBINED" = yes ]; then
    run $n ${n}_normal_json.txt --output-format=normal,json
  else
    [ $n != groups ] && run $n ${n}_normal.txt --output-format=normal
    run $n ${n}_json.txt --output-format=json
  fi
done
# item 4: plain run, no --output-format/--output, stdout captured
run groups -
find $OUT -name '*.stderr' -empty -delete
