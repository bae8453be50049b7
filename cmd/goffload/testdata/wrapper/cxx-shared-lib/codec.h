class Codec {
 public:
  explicit Codec(int key) : key_(key) {}
  // Encodes n bytes in place on the device; returns whether it ran there.
  int encode(unsigned char *buf, int n) const;

 private:
  int key_;
};
