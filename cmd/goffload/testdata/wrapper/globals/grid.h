struct grid {
  int w, h;
  int cells[4][4];
};
#pragma omp begin declare target
extern struct grid board;
extern int generation;
extern int history[8];
#pragma omp end declare target
void step(int *on_device);
