#include "../offload.h"
#include "grid.h"
#pragma omp begin declare target
struct grid board = {4, 4, {{0}}};
int generation;
int history[8];
#pragma omp end declare target
void step(int *on_device) {
  int dev = 0;
  uintptr_t probe = HOST_PROBE;
#pragma omp target map(from: dev)
  {
    ON_DEVICE(dev, probe);
    int alive = 0;
    for (int y = 0; y < board.h; y++)
      for (int x = 0; x < board.w; x++) {
        board.cells[y][x] = (board.cells[y][x] + x + y + generation) % 3;
        alive += board.cells[y][x] != 0;
      }
    history[generation++] = alive;
  }
  *on_device = dev;
}
