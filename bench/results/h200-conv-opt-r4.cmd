# device tool (nvidia-h200), commit 88c2964 (round 4's sgemm and conv branches merged):
#   bash bench/device/round3.sh build sgemm conv final
# whose conv stage is bench/device/r3/conv.sh build-device OUT (this file is its summary).
