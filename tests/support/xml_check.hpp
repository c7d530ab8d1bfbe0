#pragma once
// A tiny XML well-formedness checker for the SVG pictures LAVA writes: balanced tags, quoted attributes, escaped
// text and valid UTF-8, under one <svg> root.
#include <string>

// "" when `doc` is a well-formed XML document with an <svg> root, else what is wrong and where.
std::string xml_problem(const std::string& doc);
