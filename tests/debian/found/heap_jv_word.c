/* A jq-shaped value: {kind, pad, offset, int size, union{ptr,double}}.
 * Its first 8 bytes are small integers; when size<<32|offset<<16|kind equals
 * an address inside the open heap pool, a copy into the heap rewrites it. */
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
typedef struct {
  unsigned char kind_flags;
  unsigned char pad_;
  unsigned short offset;
  int size;
  union { void *ptr; double number; } u;
} jv;

__attribute__((noinline)) jv mk(int n, void *p) { jv j = {.kind_flags = 6, .size = n, .u.ptr = p}; return j; }
/* as jq's APPEND does: *var = jv_array_append(*var, v) */
__attribute__((noinline)) void put(jv *var, int n, void *p) { *var = mk(n, p); }
__attribute__((noinline)) int size_of(const jv *var) { return var->size; }

int main(void)
{
  jv *slot = malloc(sizeof *slot);
  void *payload = malloc(64);
  int bad = 0;
  for (int n = 0; n < 1 << 16; n++) {
    put(slot, n, payload);               /* a jv returned in registers, stored into the heap */
    if (size_of(slot) != n || slot->kind_flags != 6) {
      unsigned char raw[16];
      memcpy(raw, slot, 16);
      uint64_t w0, w1; memcpy(&w0, raw, 8); memcpy(&w1, raw + 8, 8);
      if (bad++ < 3)
        printf("size %d (0x%x) came back as size %d kind %d; raw words %016llx %016llx\n",
               n, n, slot->size, slot->kind_flags, (unsigned long long)w0, (unsigned long long)w1);
    }
  }
  printf("%d sizes of %d came back changed\n", bad, 1 << 16);
  return bad != 0;
}
