// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// The Python module _mroce_torch: ProcessGroupMroce as a subclass of
// torch.distributed.ProcessGroup, built by the creator function that
// mroce_torch registers with Backend.register_backend().
#include <pybind11/chrono.h>
#include <torch/csrc/utils/pybind.h>
#include <torch/extension.h>

#include "pg_mroce.hpp"

namespace py = pybind11;

PYBIND11_MODULE(_mroce_torch, m) {
  m.doc() = "torch.distributed backend over libmroce-coll";
  py::object base = py::module::import("torch.distributed").attr("ProcessGroup");
  py::class_<mroce_torch::ProcessGroupMroce, c10::intrusive_ptr<mroce_torch::ProcessGroupMroce>>(
      m, "ProcessGroupMroce", base)
      .def(py::init<const c10::intrusive_ptr<c10d::Store>&, int, int,
                    std::chrono::milliseconds>(),
           py::arg("store"), py::arg("rank"), py::arg("size"), py::arg("timeout"),
           py::call_guard<py::gil_scoped_release>())
      .def_property_readonly("gloo_order", &mroce_torch::ProcessGroupMroce::glooOrder)
      .def("comm_rank", &mroce_torch::ProcessGroupMroce::commRank);
}
