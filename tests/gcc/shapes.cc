// C++ call sites for the GCC inlining plugin tests: templates, inline members (COMDAT),
// virtual calls, a lambda, mutual recursion.  Prints a checksum that must not depend on inlining.
#include <cstdio>
#include <vector>

namespace {

struct Shape {
    virtual ~Shape() {}
    virtual double area() const = 0;
};

struct Rect : Shape {
    double w, h;
    Rect(double w_, double h_) : w(w_), h(h_) {}
    double area() const override { return w * h; }
};

struct Circle : Shape {
    double r;
    explicit Circle(double r_) : r(r_) {}
    double area() const override { return 3.25 * r * r; }
};

template <typename T> T clamp(T v, T lo, T hi) { return v < lo ? lo : v > hi ? hi : v; }

template <typename F> double sum_over(const std::vector<double> &v, F f)
{
    double s = 0;
    for (double x : v)
        s += f(x);
    return s;
}

bool is_odd(unsigned n);
bool is_even(unsigned n) { return n == 0 ? true : is_odd(n - 1); }
bool is_odd(unsigned n) { return n == 0 ? false : is_even(n - 1); }

double total(Shape *const *s, int n)
{
    double t = 0;
    for (int i = 0; i < n; i++)
        t += s[i]->area();
    return t;
}

}  // namespace

int main(int argc, char **)
{
    Rect r(2, 3 + argc);
    Circle c(1.5);
    Shape *shapes[] = {&r, &c, &r};
    std::vector<double> v;
    for (int i = 0; i < 10; i++)
        v.push_back(clamp(i * 1.5 - argc, 0.0, 8.0));
    double s = total(shapes, 3);
    s += sum_over(v, [](double x) { return x * x + 1; });
    s += clamp(argc * 7, 2, 5);
    s += is_even(17u + (unsigned)argc) ? 1 : 0;
    std::printf("checksum %.3f\n", s);
    return 0;
}
