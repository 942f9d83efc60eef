# The commands are in zen5-r6.txt beside each result (run in a Release build: cmake -S . -B build -G Ninja
# -DCMAKE_BUILD_TYPE=Release; cmake --build build; cd build).
