; A module for a Darwin target, which llvm-as writes in a bitcode wrapper
; (magic 0x0B17C0DE).
target triple = "x86_64-apple-macosx14.0.0"

@llvm.embedded.object = private constant [160 x i8] c"\10\FF\10\AD\01\00\00\00\A0\00\00\00\00\00\00\00 \00\00\00\00\00\00\00(\00\00\00\00\00\00\00\00\00\01\00\00\00\00\00H\00\00\00\00\00\00\00\02\00\00\00\00\00\00\00\90\00\00\00\00\00\00\00\0A\00\00\00\00\00\00\00i\00\00\00\00\00\00\00\89\00\00\00\00\00\00\00n\00\00\00\00\00\00\00u\00\00\00\00\00\00\00\00arch\00triple\00nvptx64-nvidia-cuda\00sm_70\00\00IMAGEDATA1\00\00\00\00\00\00", section "__LLVM,__offloading", align 8

!llvm.embedded.objects = !{!0}
!0 = !{ptr @llvm.embedded.object, !".llvm.offloading"}
