; Debug information before the node of llvm.embedded.objects, so that the
; node's metadata ID counts the debug-information records.
target triple = "x86_64-unknown-linux-gnu"

@llvm.embedded.object = private constant [160 x i8] c"\10\FF\10\AD\01\00\00\00\A0\00\00\00\00\00\00\00 \00\00\00\00\00\00\00(\00\00\00\00\00\00\00\00\00\01\00\00\00\00\00H\00\00\00\00\00\00\00\02\00\00\00\00\00\00\00\90\00\00\00\00\00\00\00\0A\00\00\00\00\00\00\00i\00\00\00\00\00\00\00\89\00\00\00\00\00\00\00n\00\00\00\00\00\00\00u\00\00\00\00\00\00\00\00arch\00triple\00nvptx64-nvidia-cuda\00sm_70\00\00IMAGEDATA1\00\00\00\00\00\00", section ".llvm.offloading", align 8, !dbg !0
@x = global i32 1, !dbg !6

define i32 @get() !dbg !9 {
  %v = load i32, ptr @x, align 4, !dbg !12
  ret i32 %v, !dbg !12
}

!llvm.dbg.cu = !{!2}
!llvm.module.flags = !{!13, !14}
!llvm.embedded.objects = !{!15}

!0 = !DIGlobalVariableExpression(var: !1, expr: !DIExpression())
!1 = distinct !DIGlobalVariable(name: "embedded", scope: !2, file: !3, line: 1, type: !5, isLocal: true, isDefinition: true)
!2 = distinct !DICompileUnit(language: DW_LANG_C11, file: !3, producer: "hand-written", isOptimized: false, runtimeVersion: 0, emissionKind: FullDebug, globals: !4)
!3 = !DIFile(filename: "a.c", directory: "/src")
!4 = !{!0, !6}
!5 = !DIBasicType(name: "int", size: 32, encoding: DW_ATE_signed)
!6 = !DIGlobalVariableExpression(var: !7, expr: !DIExpression())
!7 = distinct !DIGlobalVariable(name: "x", scope: !2, file: !3, line: 2, type: !5, isLocal: false, isDefinition: true)
!8 = !DISubroutineType(types: !{!5})
!9 = distinct !DISubprogram(name: "get", scope: !3, file: !3, line: 3, type: !8, scopeLine: 3, spFlags: DISPFlagDefinition, unit: !2)
!12 = !DILocation(line: 3, column: 1, scope: !9)
!13 = !{i32 2, !"Debug Info Version", i32 3}
!14 = !{i32 7, !"Dwarf Version", i32 5}
!15 = !{ptr @llvm.embedded.object, !".llvm.offloading"}
