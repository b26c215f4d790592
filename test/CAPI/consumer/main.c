/*===- main.c - An embedder of the installed C API ------------------------===*\
|*                                                                            *|
|* Part of Kiln's tests (test/CAPI/install.test). Built against the installed *|
|* headers and libKilnCAPI.so through find_package(Kiln): checks the API      *|
|* version, calls a program on the eager and cpu backends, and takes a        *|
|* result out as a DLManagedTensor that outlives its list (no copy).          *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#include "kiln-c/Kiln.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define STR(s) kilnStringRefCreateFromCString(s)

static void check(KilnStatus st, const char *what) {
  if (kilnStatusIsOk(st))
    return;
  KilnStringRef m = kilnStatusGetMessage(st);
  fprintf(stderr, "%s failed: %.*s\n", what, (int)m.length, m.data);
  exit(1);
}

/* y = tanh(x) * 2 */
static const char *kModule =
    "kg.program @f(%x: tensor<4xf32>) -> tensor<4xf32> {\n"
    "  %y = kg.graph @f_g(%x) : (tensor<4xf32>) -> tensor<4xf32> {\n"
    "  ^bb0(%a: tensor<4xf32>):\n"
    "    %t = kt.tanh %a : (tensor<4xf32>) -> tensor<4xf32>\n"
    "    %s = kt.add %t, %t : (tensor<4xf32>, tensor<4xf32>) -> "
    "tensor<4xf32>\n"
    "    kg.yield %s : tensor<4xf32>\n"
    "  }\n"
    "  kg.return %y : tensor<4xf32>\n"
    "}\n";

int main(void) {
  int v = kilnGetAPIVersion();
  printf("api version %d.%d (header %d.%d)\n", v >> 16, v & 0xffff,
         KILN_C_API_VERSION_MAJOR, KILN_C_API_VERSION_MINOR);
  if ((v >> 16) != KILN_C_API_VERSION_MAJOR)
    return 1;
  float x[4] = {-1.0f, 0.0f, 0.5f, 2.0f};
  int64_t shape[1] = {4};
  DLTensor arg;
  memset(&arg, 0, sizeof(arg));
  arg.data = x;
  arg.device.device_type = kDLCPU;
  arg.ndim = 1;
  arg.dtype.code = kDLFloat;
  arg.dtype.bits = 32;
  arg.dtype.lanes = 1;
  arg.shape = shape;
  const char *backends[2] = {"eager", "cpu"};
  for (int b = 0; b < 2; ++b) {
    KilnSession s = kilnSessionCreate();
    check(kilnSessionSetOption(s, STR("backend"), STR(backends[b])),
          "set backend");
    check(kilnSessionLoadModule(s, STR(kModule), STR("consumer")), "load");
    KilnTensorList results;
    check(kilnSessionCall(s, STR("f"), &arg, 1, NULL, &results), "call");
    DLManagedTensor *m = NULL;
    check(kilnTensorListGetManaged(results, 0, &m), "get managed");
    const void *listData = kilnTensorListGet(results, 0)->data;
    kilnTensorListDestroy(results);
    kilnSessionDestroy(s);
    /* The managed tensor outlives the list and the session. */
    const float *y = (const float *)m->dl_tensor.data;
    double err = 0;
    for (int i = 0; i < 4; ++i)
      err = fmax(err, fabs(y[i] - 2.0 * tanh(x[i])));
    printf("%s: ndim %d shape %lld, same buffer as the list: %s, max error "
           "%s\n",
           backends[b], m->dl_tensor.ndim, (long long)m->dl_tensor.shape[0],
           m->dl_tensor.data == listData ? "yes" : "no",
           err < 1e-6 ? "< 1e-6" : "TOO LARGE");
    m->deleter(m);
  }
  printf("done\n");
  return 0;
}
