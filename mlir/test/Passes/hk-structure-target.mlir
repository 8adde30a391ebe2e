// RUN: not hk-opt %s --hk-structure="arch=gfx9000" 2>&1 | FileCheck %s

// CHECK: error: unknown target architecture 'gfx9000'; use one of gfx1100, gfx1201, gfx942, gfx950
func.func @k() attributes {hk.kernel} {
  return
}
