// ports/c/c_mirror.h: the C ABI's struct mirrors, one table per pair, checked at compile time.
//
// What it does: every C struct of tendon/tendon_c.h that mirrors a C++ struct (or a part of
// one) has a table, MirrorTable<CStruct, CppStruct>, whose rows pair the fields:
//   Field<&C::x, &P::y>           one field each side, converted by the two types (Convert*)
//   SpanOf<&C::p, &C::n, &P::s>   a pointer and a count <-> a std::span
//   SpanCountedBy<...>            the same, where another row names the shared count
//   ArrayOf<&C::p, &C::n, &P::v>  a pointer and a count of C structs -> a std::vector of C++
//                                 structs, each through its own table (in only)
//   Optional<&C::has, &C::x, &P::o>  a has_ flag and a value <-> a std::optional
//   OptionalUnlessNegative<&C::x, &P::o>  a negative value leaves the optional unset
//   Flattened<C, &P::m>           a C++ member struct whose fields lie flat in the C struct
//                                 (its own table, MirrorTable<C, that member's type>)
//   OutOnly<&C::x, &P::y>         the World fills it: copied out, never in
//   ByHand<&C::..., &P::...>      converted by the code beside the table (named here so that
//                                 the table still covers every field)
//   NotInC<&P::y>                 a C++ field the C API does not carry (its default applies)
// MirrorIn and MirrorOut run the rows, so the table IS the conversion. TENDON_C_CHECK_MIRROR
// then proves, per pair, that the rows name every field of both structs exactly once: an
// aggregate's field count is found with the C++20 aggregate-arity idiom (the most AnyField
// initialisers T{...} accepts), and compared with the fields the rows name. A field added to
// one struct and not to the table fails the build with a message naming the pair.
// Brace elision: a C array member takes one initialiser per element, so a named array
// counts its elements (kSlotsOf), and the comparison stays exact.
// Rows are types over member pointers rather than X-macro lines so that the compiler checks
// each one: a misspelt field, a field of another struct, or two types with no conversion
// rule do not compile, and the checks walk the table as a type list.
// What it does NOT do: check enum values (static_asserts beside each domain's tables do),
// check layouts (c_port.h asserts the value types bit-compatible), or convert what a row
// marks ByHand. MirrorOut leaves text and arrays as the caller set them (NULL and 0): the
// C++ side cannot lend them to C.
// Threading: none. Memory: MirrorIn allocates where the C++ struct does (strings, vectors).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "tendon/ids.h"
#include "tendon/math.h"
#include "tendon/tendon_c.h"

namespace tendon::ports::capi {

// ---- values that cross as they are ----

inline Vec3 ToCpp(TendonVec3 v) { return {v.x, v.y, v.z}; }
inline TendonVec3 ToC(Vec3 v) { return {v.x, v.y, v.z}; }
inline Transform ToCpp(const TendonTransform& t) {
  Transform out;
  std::memcpy(static_cast<void*>(&out), &t, sizeof(out));
  return out;
}
inline TendonTransform ToC(const Transform& t) {
  TendonTransform out;
  std::memcpy(&out, &t, sizeof(out));
  return out;
}
// Ids cross as index | generation << 32 (0 is null).
template <class Tag>
uint64_t ToC(Id<Tag> id) {
  return id.index | static_cast<uint64_t>(id.generation) << 32;
}
template <class IdT>
IdT IdFromC(uint64_t id) {
  return IdT{static_cast<uint32_t>(id), static_cast<uint32_t>(id >> 32)};
}
// A C enum field read as the int it is: a C host may store any int there, and loading an
// out-of-range value as the enum type would be undefined behaviour (UBSan's enum check).
template <class E>
int EnumValue(const E& e) {
  static_assert(sizeof(E) == sizeof(int), "C enums are int-sized here");
  int v;
  std::memcpy(&v, &e, sizeof v);
  return v;
}
// A count and pointer pair into a span; a negative count or a NULL pointer with a count
// is refused by the caller before this.
template <class T>
std::span<T> Span(T* p, int32_t n) {
  return p != nullptr && n > 0 ? std::span<T>(p, static_cast<std::size_t>(n)) : std::span<T>();
}

// Element types one pointer can be read as the other (tendon_c.h: bit for bit).
template <class C, class P>
inline constexpr bool kBitCompatible = std::is_same_v<C, P>;
template <>
inline constexpr bool kBitCompatible<TendonVec3, Vec3> = true;
template <>
inline constexpr bool kBitCompatible<TendonTransform, Transform> = true;
template <>
inline constexpr bool kBitCompatible<TendonQuat, Quat> = true;
template <class C, class P>
inline constexpr bool kBitCompatible<const C, const P> = kBitCompatible<C, P>;

// ---- the tables ----

// MirrorTable<CStruct, CppStruct>: specialised once per pair, deriving from TableOf (for the
// C and P aliases its rows use) with `using Rows = RowList<...>;`.
template <class C, class P>
struct MirrorTable;
template <class CStruct, class CppStruct>
struct TableOf {
  using C = CStruct;
  using P = CppStruct;
};
template <class... Row>
struct RowList {};
template <class C, class P>
concept HasMirrorTable = requires { typename MirrorTable<C, P>::Rows; };

template <class M>
struct MemberTraits;
template <class S, class F>
struct MemberTraits<F S::*> {
  using Struct = S;
  using Type = F;
};
template <auto M>
using StructOf = typename MemberTraits<decltype(M)>::Struct;
template <auto M>
using TypeOf = typename MemberTraits<decltype(M)>::Type;

template <class C, class P>
void MirrorIn(const C& from, P& to);
template <class C, class P>
void MirrorOut(const P& from, C& to);

// ---- one C value into its C++ field, and back ----

template <class C, class P>
inline constexpr bool kNoRule = false;

// The C++ value of a C value, by the two types: same type, int32_t flag -> bool, the
// bit-compatible values, a C enum -> its C++ enum, an id, a pointer to a bit-compatible
// type, text, and a C struct -> a C++ struct through their table.
template <class P, class C>
P ConvertIn(const C& c) {
  if constexpr (std::is_same_v<C, P>) {
    return c;
  } else if constexpr (std::is_same_v<C, int32_t> && std::is_same_v<P, bool>) {
    return c != 0;
  } else if constexpr ((std::is_same_v<C, TendonVec3> && std::is_same_v<P, Vec3>) ||
                       (std::is_same_v<C, TendonTransform> && std::is_same_v<P, Transform>)) {
    return ToCpp(c);
  } else if constexpr (std::is_enum_v<C> && std::is_enum_v<P>) {
    return static_cast<P>(EnumValue(c));
  } else if constexpr (std::is_same_v<C, uint64_t> && requires { P{}.generation; }) {
    return IdFromC<P>(c);
  } else if constexpr (std::is_pointer_v<C> && std::is_pointer_v<P> &&
                       kBitCompatible<std::remove_pointer_t<C>, std::remove_pointer_t<P>>) {
    return reinterpret_cast<P>(c);
  } else if constexpr (std::is_same_v<C, const char*> && std::is_same_v<P, std::string>) {
    return c != nullptr ? std::string(c) : std::string();
  } else if constexpr (HasMirrorTable<C, P>) {
    P p{};
    MirrorIn(c, p);
    return p;
  } else {
    static_assert(kNoRule<C, P>, "no conversion rule between these field types: use ByHand");
  }
}
// Whether ConvertOut can produce the C value (text cannot be lent to C).
template <class C, class P>
inline constexpr bool kOutward = !std::is_same_v<P, std::string>;
template <class C, class P>
C ConvertOut(const P& p) {
  if constexpr (std::is_same_v<C, P>) {
    return p;
  } else if constexpr (std::is_same_v<C, int32_t> && std::is_same_v<P, bool>) {
    return p ? 1 : 0;
  } else if constexpr ((std::is_same_v<C, TendonVec3> && std::is_same_v<P, Vec3>) ||
                       (std::is_same_v<C, TendonTransform> && std::is_same_v<P, Transform>)) {
    return ToC(p);
  } else if constexpr (std::is_enum_v<C> && std::is_enum_v<P>) {
    return static_cast<C>(p);
  } else if constexpr (std::is_same_v<C, uint64_t> && requires { p.generation; }) {
    return ToC(p);
  } else if constexpr (std::is_pointer_v<C> && std::is_pointer_v<P> &&
                       kBitCompatible<std::remove_pointer_t<C>, std::remove_pointer_t<P>>) {
    return reinterpret_cast<C>(p);
  } else if constexpr (HasMirrorTable<C, P>) {
    C c{};
    MirrorOut(p, c);
    return c;
  } else {
    static_assert(kNoRule<C, P>, "no conversion rule between these field types: use ByHand");
  }
}

// ---- the rows ----

template <auto... M>
struct Members {};

template <auto c, auto p>
struct Field {
  using Named = Members<c, p>;
  static void In(const StructOf<c>& from, StructOf<p>& to) { to.*p = ConvertIn<TypeOf<p>>(from.*c); }
  static void Out(const StructOf<p>& from, StructOf<c>& to) {
    if constexpr (kOutward<TypeOf<c>, TypeOf<p>>) to.*c = ConvertOut<TypeOf<c>>(from.*p);
  }
};

template <auto ptr, auto count, auto p>
struct SpanOf {
  using Named = Members<ptr, count, p>;
  using Element = typename TypeOf<p>::element_type;
  static void In(const StructOf<ptr>& from, StructOf<p>& to) {
    to.*p = Span(ConvertIn<Element*>(from.*ptr), from.*count);
  }
  static void Out(const StructOf<p>& from, StructOf<ptr>& to) {
    to.*ptr = ConvertOut<TypeOf<ptr>>((from.*p).data());
    to.*count = static_cast<TypeOf<count>>((from.*p).size());
  }
};
template <auto ptr, auto count, auto p>
struct SpanCountedBy {
  using Named = Members<ptr, p>;
  using Element = typename TypeOf<p>::element_type;
  static void In(const StructOf<ptr>& from, StructOf<p>& to) {
    to.*p = Span(ConvertIn<Element*>(from.*ptr), from.*count);
  }
  static void Out(const StructOf<p>& from, StructOf<ptr>& to) { to.*ptr = ConvertOut<TypeOf<ptr>>((from.*p).data()); }
};

template <auto ptr, auto count, auto p>
struct ArrayOf {
  using Named = Members<ptr, count, p>;
  using Element = typename TypeOf<p>::value_type;
  static void In(const StructOf<ptr>& from, StructOf<p>& to) {
    for (const auto& e : Span(from.*ptr, from.*count)) (to.*p).push_back(ConvertIn<Element>(e));
  }
  static void Out(const StructOf<p>&, StructOf<ptr>&) {}
};

template <auto has, auto value, auto p>
struct Optional {
  using Named = Members<has, value, p>;
  using Value = typename TypeOf<p>::value_type;
  static void In(const StructOf<has>& from, StructOf<p>& to) {
    if (from.*has != 0) to.*p = ConvertIn<Value>(from.*value);
  }
  static void Out(const StructOf<p>& from, StructOf<has>& to) {
    to.*has = (from.*p).has_value() ? 1 : 0;
    if ((from.*p).has_value()) to.*value = ConvertOut<TypeOf<value>>(*(from.*p));
  }
};
template <auto c, auto p>
struct OptionalUnlessNegative {
  using Named = Members<c, p>;
  using Value = typename TypeOf<p>::value_type;
  static void In(const StructOf<c>& from, StructOf<p>& to) {
    if (from.*c >= TypeOf<c>{0}) to.*p = ConvertIn<Value>(from.*c);
  }
  static void Out(const StructOf<p>& from, StructOf<c>& to) {
    to.*c = (from.*p).has_value() ? ConvertOut<TypeOf<c>>(*(from.*p)) : TypeOf<c>{-1};
  }
};

template <class... L>
struct ConcatMembers;
template <>
struct ConcatMembers<> : std::type_identity<Members<>> {};
template <auto... A>
struct ConcatMembers<Members<A...>> : std::type_identity<Members<A...>> {};
template <auto... A, auto... B, class... Rest>
struct ConcatMembers<Members<A...>, Members<B...>, Rest...> : ConcatMembers<Members<A..., B...>, Rest...> {};
template <class S, class L>
struct MembersOf;
template <class S, auto... M>
struct MembersOf<S, Members<M...>>
    : ConcatMembers<std::conditional_t<std::is_same_v<StructOf<M>, S>, Members<M>, Members<>>...> {};
template <class Rows>
struct NamedByRows;
template <class... Row>
struct NamedByRows<RowList<Row...>> : ConcatMembers<typename Row::Named...> {};
// Every member a table's rows name, flattened tables' C fields included.
template <class C, class P>
using NamedBy = typename NamedByRows<typename MirrorTable<C, P>::Rows>::type;

template <class C, auto p>
struct Flattened {
  using Named = typename ConcatMembers<typename MembersOf<C, NamedBy<C, TypeOf<p>>>::type, Members<p>>::type;
  static void In(const C& from, StructOf<p>& to) { MirrorIn(from, to.*p); }
  static void Out(const StructOf<p>& from, C& to) { MirrorOut(from.*p, to); }
};

template <auto... M>
struct ByHand {
  using Named = Members<M...>;
  static void In(const auto&, auto&) {}
  static void Out(const auto&, auto&) {}
};
template <auto p>
struct NotInC : ByHand<p> {};
template <auto c, auto p>
struct OutOnly {
  using Named = Members<c, p>;
  static void In(const StructOf<c>&, StructOf<p>&) {}
  static void Out(const StructOf<p>& from, StructOf<c>& to) { to.*c = ConvertOut<TypeOf<c>>(from.*p); }
};

template <class Rows>
struct RunRows;
template <class... Row>
struct RunRows<RowList<Row...>> {
  static void In(const auto& from, auto& to) { (Row::In(from, to), ...); }
  static void Out(const auto& from, auto& to) { (Row::Out(from, to), ...); }
};
// Every row's C++ value from the C struct (rows marked ByHand and NotInC are left alone).
template <class C, class P>
void MirrorIn(const C& from, P& to) {
  RunRows<typename MirrorTable<C, P>::Rows>::In(from, to);
}
// Every row's C value from the C++ struct, but text and arrays (and ByHand rows).
template <class C, class P>
void MirrorOut(const P& from, C& to) {
  RunRows<typename MirrorTable<C, P>::Rows>::Out(from, to);
}

// ---- the checks ----

// An aggregate's field count: the most AnyField initialisers T{...} accepts. AnyField's
// conversion is lvalue-qualified so that a member with a converting constructor template
// (std::optional) takes its constructor instead of an ambiguity. A C array member takes one
// initialiser per element (brace elision): kSlotsOf counts them the same way.
struct AnyField {
  template <class U>
  operator U() const&;  // declared only: used in unevaluated initialisers
};
template <class T, class... A>
concept BracedFrom = requires { T{std::declval<A>()...}; };
template <class T, class... A>
consteval std::size_t FieldSlots() {
  if constexpr (BracedFrom<T, A..., AnyField>) return FieldSlots<T, A..., AnyField>();
  else return sizeof...(A);
}
template <class F>
inline constexpr std::size_t kSlotsOf = 1;
template <class E, std::size_t N>
inline constexpr std::size_t kSlotsOf<E[N]> = N * kSlotsOf<E>;

template <class S, class L>
struct SlotsNamed;
template <class S, auto... M>
struct SlotsNamed<S, Members<M...>> {
  static constexpr std::size_t kValue = ((std::is_same_v<StructOf<M>, S> ? kSlotsOf<TypeOf<M>> : 0) + ... + 0);
};
template <auto A, auto B>
consteval bool SameMember() {
  if constexpr (std::is_same_v<decltype(A), decltype(B)>) return A == B;
  else return false;
}
template <class L>
struct MemberChecks;
template <auto... M>
struct MemberChecks<Members<M...>> {
  template <auto X>
  static consteval int Occurrences() {
    return (int{SameMember<X, M>()} + ... + 0);
  }
  static consteval bool EachOnce() { return ((Occurrences<M>() == 1) && ...); }
  template <class C, class P>
  static consteval bool OnlyOf() {
    return ((std::is_same_v<StructOf<M>, C> || std::is_same_v<StructOf<M>, P>) && ...);
  }
};

template <class C, class P>
consteval bool RowsNameOnly() {
  return MemberChecks<NamedBy<C, P>>::template OnlyOf<C, P>();
}
template <class C, class P>
consteval bool RowsNameEachFieldOnce() {
  return MemberChecks<NamedBy<C, P>>::EachOnce();
}
template <class C, class P>
consteval bool RowsCoverC() {
  return SlotsNamed<C, NamedBy<C, P>>::kValue == FieldSlots<C>();
}
template <class C, class P>
consteval bool RowsCoverCpp() {
  return SlotsNamed<P, NamedBy<C, P>>::kValue == FieldSlots<P>();
}

}  // namespace tendon::ports::capi

// The checks of one pair, each with a message naming it. A flattened table (a C++ member
// struct whose fields lie flat in the C struct) covers only part of the C struct: the
// table of the enclosing C++ struct checks the C side, TENDON_C_CHECK_FLATTENED the rest.
#define TENDON_C_CHECK_ROWS(CStruct, CppStruct)                                                                  \
  static_assert(::tendon::ports::capi::RowsNameOnly<CStruct, CppStruct>(),                                      \
                "mirror " #CStruct " <-> " #CppStruct ": a row names a field of neither struct");                \
  static_assert(::tendon::ports::capi::RowsNameEachFieldOnce<CStruct, CppStruct>(),                             \
                "mirror " #CStruct " <-> " #CppStruct ": a field is named by two rows");                         \
  static_assert(::tendon::ports::capi::RowsCoverCpp<CStruct, CppStruct>(),                                      \
                "mirror " #CStruct " <-> " #CppStruct ": the table does not name every field of " #CppStruct     \
                " (a field added to one struct needs a row: convert it, or say why not with NotInC / ByHand)")
#define TENDON_C_CHECK_FLATTENED(CStruct, CppStruct) TENDON_C_CHECK_ROWS(CStruct, CppStruct)
#define TENDON_C_CHECK_MIRROR(CStruct, CppStruct)                                                                \
  TENDON_C_CHECK_ROWS(CStruct, CppStruct);                                                                      \
  static_assert(::tendon::ports::capi::RowsCoverC<CStruct, CppStruct>(),                                        \
                "mirror " #CStruct " <-> " #CppStruct ": the table does not name every field of " #CStruct       \
                " (a field added to one struct needs a row: convert it, or say why not with NotInC / ByHand)")
// A struct converted wholly by hand (no C struct mirrors it field for field): the fields
// its hand-written conversion sets, so that a field added to it fails here too.
#define TENDON_C_CHECK_BY_HAND(Struct, fields)                                                                   \
  static_assert(::tendon::ports::capi::FieldSlots<Struct>() == (fields),                                        \
                #Struct ": its hand-written conversion sets " #fields " fields; one was added or removed")
