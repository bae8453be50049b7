; Device code that is no OffloadBinary, under .llvm.offloading: LLVM's
; extractFromBitcode reads it and fails ("The end of the file was
; unexpectedly encountered" or "Invalid data"), as goffload does.
target triple = "x86_64-unknown-linux-gnu"

@llvm.embedded.object = private constant [16 x i8] c"not a binary\00\00\00\00", section ".llvm.offloading", align 8

!llvm.embedded.objects = !{!0}
!0 = !{ptr @llvm.embedded.object, !".llvm.offloading"}
