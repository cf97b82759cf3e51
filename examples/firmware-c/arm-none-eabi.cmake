# arm-none-eabi.cmake: a CMake toolchain file for bare-metal Arm with GNU Arm's gcc and newlib
# (Debian: apt-get install gcc-arm-none-eabi). The core and float ABI options come from the
# model's package (zant::digits), not from here.
set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR arm)
set(CMAKE_C_COMPILER arm-none-eabi-gcc)
set(CMAKE_CXX_COMPILER arm-none-eabi-g++)
set(CMAKE_ASM_COMPILER arm-none-eabi-gcc)
# No OS to link a test program for: CMake's compiler check builds a static library instead.
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
