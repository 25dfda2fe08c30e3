// What the bindings share (pysmt/_bindings.hpp): str <-> UTF-8 bytes.
#include "pysmt/_bindings.hpp"

namespace pysmt::bindings {

std::string utf8(py::handle text) {
  if (!PyUnicode_Check(text.ptr())) throw py::type_error("expected a str");
  Py_ssize_t size = 0;
  if (const char *data = PyUnicode_AsUTF8AndSize(text.ptr(), &size))
    return std::string(data, static_cast<size_t>(size));
  PyErr_Clear();
  py::object bytes = py::reinterpret_steal<py::object>(PyUnicode_AsEncodedString(text.ptr(), "utf-8", "surrogatepass"));
  if (!bytes) throw py::error_already_set();
  return std::string(PyBytes_AS_STRING(bytes.ptr()), static_cast<size_t>(PyBytes_GET_SIZE(bytes.ptr())));
}

std::vector<std::string> utf8_all(const py::sequence &texts) {
  std::vector<std::string> out;
  out.reserve(texts.size());
  for (py::handle text : texts) out.push_back(utf8(text));
  return out;
}

py::str text_of(std::string_view bytes) {
  PyObject *text = PyUnicode_DecodeUTF8(bytes.data(), static_cast<Py_ssize_t>(bytes.size()), "surrogatepass");
  if (!text) throw py::error_already_set();
  return py::reinterpret_steal<py::str>(text);
}

}  // namespace pysmt::bindings
