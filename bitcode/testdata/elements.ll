; Initializers of each encoding the bitcode writer uses for a
; ConstantDataSequential, under a section LLVM's offloading tools do not
; read (".test"): STRING (an array of 8-bit fields), CSTRING (char6, 7-bit,
; and unabbreviated for 8-bit characters; the NUL is implied), DATA of each
; element type; and two that are no ConstantDataSequential (i1, i128).
target triple = "x86_64-unknown-linux-gnu"

@str = constant [3 x i8] c"\01\00\FF"
@cstr6 = constant [6 x i8] c"hello\00"
@cstr7 = constant [14 x i8] c"Hello, World!\00"
@cstr8 = constant [3 x i8] c"\C3\A9\00"
@i16s = constant [2 x i16] [i16 1, i16 -2]
@i32s = constant [2 x i32] [i32 1, i32 -2]
@i64s = constant [2 x i64] [i64 1, i64 -2]
@halfs = constant [2 x half] [half 1.0, half -2.0]
@bfloats = constant [1 x bfloat] [bfloat 1.0]
@floats = constant [2 x float] [float 1.0, float -2.0]
@doubles = constant [1 x double] [double 1.5]
@vec = constant <4 x i8> <i8 1, i8 2, i8 3, i8 4>
@i1s = constant [2 x i1] [i1 true, i1 false]
@i128s = constant [1 x i128] [i128 1]

!llvm.embedded.objects = !{!0, !1, !2, !3, !4, !5, !6, !7, !8, !9, !10, !11, !12, !13}
!0 = !{ptr @str, !".test"}
!1 = !{ptr @cstr6, !".test"}
!2 = !{ptr @cstr7, !".test"}
!3 = !{ptr @cstr8, !".test"}
!4 = !{ptr @i16s, !".test"}
!5 = !{ptr @i32s, !".test"}
!6 = !{ptr @i64s, !".test"}
!7 = !{ptr @halfs, !".test"}
!8 = !{ptr @bfloats, !".test"}
!9 = !{ptr @floats, !".test"}
!10 = !{ptr @doubles, !".test"}
!11 = !{ptr @vec, !".test"}
!12 = !{ptr @i1s, !".test"}
!13 = !{ptr @i128s, !".test"}
