// The bytes of the Go core (libmoraine_go.so, see moraine_go.hpp), placed
// in a read-only section of the extension between the hidden symbols
// moraine_go_image_begin and moraine_go_image_end. MORAINE_GO_IMAGE is the
// library's path, set by cshim/storage/CMakeLists.txt, which rebuilds this
// file whenever the library changes.
#ifndef MORAINE_GO_IMAGE
#error "MORAINE_GO_IMAGE (the path of libmoraine_go.so) is not defined"
#endif

__asm__(".section .rodata.moraine_go_image,\"a\",@progbits\n"
        ".balign 64\n"
        ".globl moraine_go_image_begin\n"
        ".hidden moraine_go_image_begin\n"
        "moraine_go_image_begin:\n"
        ".incbin \"" MORAINE_GO_IMAGE "\"\n"
        ".globl moraine_go_image_end\n"
        ".hidden moraine_go_image_end\n"
        "moraine_go_image_end:\n"
        ".previous\n");
