/* A C program over libkiln_rt alone (runtime/include/kiln_rt.h): loads the
 * package of Inputs/package_driver.mlir, prints its entries and signatures,
 * then calls @f from 8 threads at once on inputs of different shapes and
 * compares every result with a reference computed here in C; every fourth
 * call of @pick from each thread has an index out of range, which must fail
 * with the formatted run-time error while the other calls succeed. Also the
 * errors of bad arguments. Used by packages-c-driver.test. */
#include "kiln_rt.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define THREADS 8
#define CALLS 40

static KilnRtPackage *pkg;
static int entry_f, entry_pick;

static DLTensor tensor(void *data, int ndim, int64_t *shape, uint8_t code,
                       uint8_t bits) {
  DLTensor t;
  memset(&t, 0, sizeof(t));
  t.data = data;
  t.device.device_type = kDLCPU;
  t.ndim = ndim;
  t.dtype.code = code;
  t.dtype.bits = bits;
  t.dtype.lanes = 1;
  t.shape = shape;
  return t;
}

typedef struct {
  int id, mismatches, failures, errors_ok, errors_bad;
  char first_error[512];
} Work;

static void *worker(void *arg) {
  Work *w = (Work *)arg;
  for (int c = 0; c < CALLS; ++c) {
    int64_t rows = 1 + (w->id * 7 + c) % 23;
    float *a = malloc(sizeof(float) * rows * 3), b[3];
    for (int64_t k = 0; k < rows * 3; ++k)
      a[k] = (float)((k * 37 + w->id * 11 + c) % 17) / 4.0f - 2.0f;
    for (int k = 0; k < 3; ++k)
      b[k] = 0.5f * (float)(k + 1) - (float)(c % 3);
    int64_t ashape[2] = {rows, 3}, bshape[1] = {3};
    DLTensor ta = tensor(a, 2, ashape, kDLFloat, 32);
    DLTensor tb = tensor(b, 1, bshape, kDLFloat, 32);
    const DLTensor *args[2] = {&ta, &tb};
    DLManagedTensor *out[2];
    if (kiln_rt_run(pkg, entry_f, args, 2, out, 2) != KILN_RT_OK) {
      ++w->failures;
      snprintf(w->first_error, sizeof(w->first_error), "%s",
               kiln_rt_last_error());
      free(a);
      continue;
    }
    const float *r0 = (const float *)out[0]->dl_tensor.data;
    const float *r1 = (const float *)out[1]->dl_tensor.data;
    if (out[0]->dl_tensor.ndim != 2 || out[0]->dl_tensor.shape[0] != rows ||
        out[0]->dl_tensor.shape[1] != 3 || out[1]->dl_tensor.ndim != 1 ||
        out[1]->dl_tensor.shape[0] != rows)
      ++w->mismatches;
    else
      for (int64_t i = 0; i < rows; ++i) {
        double sum = 0;
        for (int j = 0; j < 3; ++j) {
          float want = a[i * 3 + j] * b[j] + a[i * 3 + j];
          sum += want;
          if (fabsf(r0[i * 3 + j] - want) > 1e-6f * (1 + fabsf(want)))
            ++w->mismatches;
        }
        if (fabs(r1[i] - sum) > 1e-5 * (1 + fabs(sum)))
          ++w->mismatches;
      }
    out[0]->deleter(out[0]);
    out[1]->deleter(out[1]);
    free(a);

    float x[4] = {10, 11, 12, 13};
    int64_t idx[2] = {c % 4, (c % 4 == 3) ? 4 + w->id : 1};
    int64_t xshape[1] = {4}, ishape[1] = {2};
    DLTensor tx = tensor(x, 1, xshape, kDLFloat, 32);
    DLTensor ti = tensor(idx, 1, ishape, kDLInt, 64);
    const DLTensor *pargs[2] = {&tx, &ti};
    DLManagedTensor *pout[1];
    int rc = kiln_rt_run(pkg, entry_pick, pargs, 2, pout, 1);
    if (idx[1] >= 4) {
      char want[128];
      snprintf(want, sizeof(want),
               "driver.py:3:9: index %lld is out of range for dim 0 with size 4",
               (long long)idx[1]);
      if (rc != KILN_RT_OK && strstr(kiln_rt_last_error(), want))
        ++w->errors_ok;
      else
        ++w->errors_bad;
    } else if (rc != KILN_RT_OK) {
      ++w->failures;
    } else {
      const float *p = (const float *)pout[0]->dl_tensor.data;
      if (p[0] != x[idx[0]] || p[1] != x[idx[1]])
        ++w->mismatches;
      pout[0]->deleter(pout[0]);
    }
  }
  return NULL;
}

static void print_spec(const char *what, int i, const KilnRtTensorSpec *s) {
  printf("  %s %d '%s': code %d bits %d [", what, i, s->name, s->dtype.code,
         s->dtype.bits);
  for (int d = 0; d < s->ndim; ++d) {
    if (s->shape[d] >= 0)
      printf("%s%lld", d ? ", " : "", (long long)s->shape[d]);
    else
      printf("%s%s", d ? ", " : "", s->dim_names[d] ? s->dim_names[d] : "?");
  }
  printf("]\n");
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s package.so\n", argv[0]);
    return 2;
  }
  printf("api %d, format %d\n", kiln_rt_api_version(),
         kiln_rt_package_format_version());
  pkg = kiln_rt_package_load(argv[1]);
  if (!pkg) {
    printf("load failed: %s\n", kiln_rt_last_error());
    return 1;
  }
  for (int e = 0; e < kiln_rt_package_num_entries(pkg); ++e) {
    printf("entry %s: %d args, %d results\n", kiln_rt_entry_name(pkg, e),
           kiln_rt_entry_num_args(pkg, e), kiln_rt_entry_num_results(pkg, e));
    KilnRtTensorSpec s;
    for (int i = 0; i < kiln_rt_entry_num_args(pkg, e); ++i)
      if (kiln_rt_entry_arg(pkg, e, i, &s) == KILN_RT_OK)
        print_spec("arg", i, &s);
    for (int i = 0; i < kiln_rt_entry_num_results(pkg, e); ++i)
      if (kiln_rt_entry_result(pkg, e, i, &s) == KILN_RT_OK)
        print_spec("result", i, &s);
  }
  entry_f = kiln_rt_package_find_entry(pkg, "f");
  entry_pick = kiln_rt_package_find_entry(pkg, "pick");
  if (kiln_rt_package_find_entry(pkg, "g") < 0)
    printf("find g: %s\n", kiln_rt_last_error());

  /* Bad arguments. */
  float a[6] = {0};
  int64_t shape2[2] = {2, 3}, shape3[1] = {3}, shape4[1] = {4};
  DLTensor ta = tensor(a, 2, shape2, kDLFloat, 32);
  DLTensor tb = tensor(a, 1, shape4, kDLFloat, 32);
  const DLTensor *bad[2] = {&ta, &tb};
  DLManagedTensor *out[2];
  if (kiln_rt_run(pkg, entry_f, bad, 2, out, 2) != KILN_RT_OK)
    printf("bad shape: %s\n", kiln_rt_last_error());
  tb = tensor(a, 1, shape3, kDLFloat, 32);
  if (kiln_rt_run(pkg, entry_f, bad, 2, out, 1) != KILN_RT_OK)
    printf("bad result count: %s\n", kiln_rt_last_error());
  tb.device.device_type = kDLCUDA;
  if (kiln_rt_check_args(pkg, entry_f, bad, 2) != KILN_RT_OK)
    printf("cuda: %s\n", kiln_rt_last_error());
  tb.device.device_type = kDLCPU;
  tb.shape = NULL;
  if (kiln_rt_check_args(pkg, entry_f, bad, 2) != KILN_RT_OK)
    printf("no shape: %s\n", kiln_rt_last_error());

  pthread_t threads[THREADS];
  Work work[THREADS];
  memset(work, 0, sizeof(work));
  for (int t = 0; t < THREADS; ++t) {
    work[t].id = t;
    pthread_create(&threads[t], NULL, worker, &work[t]);
  }
  int mismatches = 0, failures = 0, ok = 0, badErrors = 0;
  for (int t = 0; t < THREADS; ++t) {
    pthread_join(threads[t], NULL);
    mismatches += work[t].mismatches;
    failures += work[t].failures;
    ok += work[t].errors_ok;
    badErrors += work[t].errors_bad;
    if (work[t].failures)
      printf("thread %d: %s\n", t, work[t].first_error);
  }
  printf("threads: %d x %d calls of @f and @pick: %d mismatches, %d failed "
         "calls, %d run-time errors as expected, %d wrong\n",
         THREADS, CALLS, mismatches, failures, ok, badErrors);
  kiln_rt_package_free(pkg);
  return mismatches || failures || badErrors;
}
