/*===-- kiln-c/DLPack.h - DLPack-compatible tensor descriptors ----*- C -*-===*\
|*                                                                            *|
|* Part of Kiln. The tensor descriptors of the C API, laid out as the DLPack  *|
|* specification (https://dmlc.github.io/dlpack/latest/) lays them out, so a  *|
|* DLTensor from NumPy, PyTorch or any DLPack producer can be passed as is.   *|
|*                                                                            *|
|* The C API never takes ownership of a caller's memory; it hands results    *|
|* out as DLManagedTensor (kilnTensorListGetManaged), the DLPack form that   *|
|* frameworks (torch.utils.dlpack.from_dlpack, numpy.from_dlpack) adopt      *|
|* without a copy.                                                            *|
|*                                                                            *|
|* A program that already includes the real <dlpack/dlpack.h> either includes *|
|* it before this header, or defines KILN_HAVE_DLPACK (and includes it        *|
|* itself) so that these declarations are skipped and its own are used.       *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef KILN_C_DLPACK_H
#define KILN_C_DLPACK_H

#if !defined(KILN_HAVE_DLPACK) && !defined(DLPACK_DLPACK_H_)

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Where a tensor's memory lives (the values are the DLPack ones).
typedef enum {
  kDLCPU = 1,  ///< host memory
  kDLCUDA = 2, ///< CUDA device memory
} DLDeviceType;

/// A device: its type and its ordinal (0 for the host).
typedef struct {
  DLDeviceType device_type;
  int32_t device_id;
} DLDevice;

/// The kind of a tensor element (the values are the DLPack ones).
typedef enum {
  kDLInt = 0,    ///< signed integer
  kDLUInt = 1,   ///< unsigned integer
  kDLFloat = 2,  ///< IEEE floating point
  kDLBfloat = 4, ///< bfloat16
  kDLComplex = 5, ///< complex (float pairs); not accepted by Kiln
  kDLBool = 6,   ///< boolean, one byte per element
} DLDataTypeCode;

/// An element type: a DLDataTypeCode, the width in bits and the number of
/// vector lanes (1 for scalars elements).
typedef struct {
  uint8_t code;
  uint8_t bits;
  uint16_t lanes;
} DLDataType;

/// A view of an n-dimensional array. Nothing is owned: `shape` and `strides`
/// point to `ndim` values each, and the first element is at
/// `(char *)data + byte_offset`. `strides` counts elements (not bytes); NULL
/// means compact row-major.
typedef struct {
  void *data;
  DLDevice device;
  int32_t ndim;
  DLDataType dtype;
  int64_t *shape;
  int64_t *strides;
  uint64_t byte_offset;
} DLTensor;

/// A DLTensor with an owner: whoever holds it calls `deleter(self)` once
/// when done, which frees the tensor (its data, shape and this struct).
typedef struct DLManagedTensor {
  DLTensor dl_tensor;
  void *manager_ctx;
  void (*deleter)(struct DLManagedTensor *self);
} DLManagedTensor;

#ifdef __cplusplus
}
#endif

#endif /* !KILN_HAVE_DLPACK && !DLPACK_DLPACK_H_ */

#endif /* KILN_C_DLPACK_H */
