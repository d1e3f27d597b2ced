# Writes the app's man page from its own option descriptions:
#   cmake -DCLI=path/to/driftless -DOUT=folder -P generateman.cmake
execute_process(COMMAND "${CLI}" --man OUTPUT_FILE "${OUT}/driftless.1" RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "driftless --man failed (${rc})")
endif()
execute_process(COMMAND gzip -9nf -k "${OUT}/driftless.1" RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "gzip of driftless.1 failed (${rc})")
endif()
