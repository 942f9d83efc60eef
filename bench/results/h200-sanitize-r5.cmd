# device tool (nvidia-h200), commit 4bc3020:
#   R3_build=300 R3_sanitize5=200 bash bench/device/round3.sh build sanitize5 final
# sanitize5 stage: bench/device/r3/sanitize5.sh; the final stage's compare is h200-final-r5b-8192.txt
