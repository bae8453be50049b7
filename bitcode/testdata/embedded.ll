; Several globals and llvm.embedded.objects operands, as LLVM's
; extractFromBitcode reads them: !0 (twice) and !7 are read, the others
; skipped (another section, a zeroinitializer, a function, a structure, no
; global, a single operand). The binaries are those clang-offload-packager
; 22 wrote (offload/testdata/llvm/packager/single-llvm22.bin and
; multi-llvm22.bin).
target triple = "x86_64-unknown-linux-gnu"

@bin.single = private constant [160 x i8] c"\10\FF\10\AD\01\00\00\00\A0\00\00\00\00\00\00\00 \00\00\00\00\00\00\00(\00\00\00\00\00\00\00\00\00\01\00\00\00\00\00H\00\00\00\00\00\00\00\02\00\00\00\00\00\00\00\90\00\00\00\00\00\00\00\0A\00\00\00\00\00\00\00i\00\00\00\00\00\00\00\89\00\00\00\00\00\00\00n\00\00\00\00\00\00\00u\00\00\00\00\00\00\00\00arch\00triple\00nvptx64-nvidia-cuda\00sm_70\00\00IMAGEDATA1\00\00\00\00\00\00", section ".llvm.offloading", align 8
@bin.multi = private constant [400 x i8] c"\10\FF\10\AD\01\00\00\00\F0\00\00\00\00\00\00\00 \00\00\00\00\00\00\00(\00\00\00\00\00\00\00\00\00\01\00\00\00\00\00H\00\00\00\00\00\00\00\05\00\00\00\00\00\00\00\E0\00\00\00\00\00\00\00\0A\00\00\00\00\00\00\00\9E\00\00\00\00\00\00\00\CC\00\00\00\00\00\00\00\99\00\00\00\00\00\00\00\D7\00\00\00\00\00\00\00\AD\00\00\00\00\00\00\00\D5\00\00\00\00\00\00\00\A6\00\00\00\00\00\00\00\B8\00\00\00\00\00\00\00\B2\00\00\00\00\00\00\00\D3\00\00\00\00\00\00\00\00arch\00feature\00triple\00zeta\00alpha\00nvptx64-nvidia-cuda\00+ptx63\002\001\00sm_70\00\00\00\00IMAGEDATA1\00\00\00\00\00\00\10\FF\10\AD\01\00\00\00\A0\00\00\00\00\00\00\00 \00\00\00\00\00\00\00(\00\00\00\00\00\00\00\01\00\04\00\00\00\00\00H\00\00\00\00\00\00\00\02\00\00\00\00\00\00\00\90\00\00\00\00\00\00\00\10\00\00\00\00\00\00\00i\00\00\00\00\00\00\00\87\00\00\00\00\00\00\00n\00\00\00\00\00\00\00u\00\00\00\00\00\00\00\00arch\00triple\00amdgcn-amd-amdhsa\00gfx90a\00\00\00second-image-xyz", section ".llvm.offloading", align 8
@lto.junk = private constant [4 x i8] c"junk"
@zero = private constant [16 x i8] zeroinitializer
@pair = private constant { i32, i32 } { i32 1, i32 2 }
@llvm.compiler.used = appending global [5 x ptr] [ptr @bin.single, ptr @bin.multi, ptr @lto.junk, ptr @zero, ptr @pair], section "llvm.metadata"

declare void @f()

!llvm.embedded.objects = !{!0, !1, !2, !3, !4, !5, !6, !7, !0}
!0 = !{ptr @bin.single, !".llvm.offloading"}
!1 = !{ptr @lto.junk, !".llvm.lto"}
!2 = !{ptr @zero, !".llvm.offloading"}
!3 = !{ptr @f, !".llvm.offloading"}
!4 = !{ptr @pair, !".llvm.offloading"}
!5 = !{i32 7, !".llvm.offloading"}
!6 = !{ptr @bin.multi}
!7 = !{ptr @bin.multi, !".llvm.offloading", !"a third operand"}
