; A debug-information node as the operand of llvm.embedded.objects: LLVM
; reads its operands by their position in the node, which goffload does not
; know for such nodes, so it refuses the module.
target triple = "x86_64-unknown-linux-gnu"

!llvm.embedded.objects = !{!0}
!0 = !DIFile(filename: "ptr", directory: ".llvm.offloading")
