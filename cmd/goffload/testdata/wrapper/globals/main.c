#include "../offload.h"
#include "grid.h"
int main(void) {
  for (int y = 0; y < 4; y++) board.cells[y][y] = 2;
#pragma omp target update to(board)
  int dev = 0, all = 1;
  for (int i = 0; i < 5; i++) {
    step(&dev);
    all = all && dev;
  }
  printf("host before update: generation %d, cell %d\n", generation, board.cells[1][2]);
#pragma omp target update from(board, generation, history)
  printf("on device %d\n", all);
  printf("generation %d, history", generation);
  for (int i = 0; i < generation; i++) printf(" %d", history[i]);
  printf("\nrow 0:");
  for (int x = 0; x < 4; x++) printf(" %d", board.cells[0][x]);
  printf("\n");
  return 0;
}
