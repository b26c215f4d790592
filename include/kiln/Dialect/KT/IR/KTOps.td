//===- KTOps.td - All kt ops (used for documentation) ------*- tablegen -*-===//
//
// Part of Kiln. Each family is generated separately (see CMakeLists.txt);
// this file gathers them for the dialect documentation.
//
//===----------------------------------------------------------------------===//

include "kiln/Dialect/KT/IR/KTElementwiseOps.td"
include "kiln/Dialect/KT/IR/KTCreationOps.td"
include "kiln/Dialect/KT/IR/KTReductionOps.td"
include "kiln/Dialect/KT/IR/KTNNOps.td"
include "kiln/Dialect/KT/IR/KTNormOps.td"
include "kiln/Dialect/KT/IR/KTShapeOps.td"
include "kiln/Dialect/KT/IR/KTRefOps.td"
include "kiln/Dialect/KT/IR/KTFusionOps.td"
