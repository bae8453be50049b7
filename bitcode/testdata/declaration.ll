; A global of llvm.embedded.objects without an initializer: LLVM's
; extractFromBitcode has no bytes to read (its GlobalVariable::getInitializer
; asserts), so it is an error.
target triple = "x86_64-unknown-linux-gnu"

@missing = external constant [8 x i8]

!llvm.embedded.objects = !{!0}
!0 = !{ptr @missing, !".llvm.offloading"}
