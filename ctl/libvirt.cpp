// poolctl libvirt: the qemu hook that gives each libvirt VM its own profile
// and a domain named after it, though qemu.conf has one memory_backing_dir
// for the whole host.
//
// libvirt runs every executable in /etc/libvirt/hooks/qemu.d/ as
//   HOOK VM OPERATION SUB-OPERATION EXTRA
// with the domain's XML on stdin (libvirt's hooks page). poolmem's hook is
// "exec poolctl libvirt hook "$@"". At "prepare begin" libvirt has chosen
// the VM's id but not yet made <memory_backing_dir>/libvirt/qemu/<id>-<vm>/;
// the hook binds that name (POOLMEM_VM_BIND) to the profile the VM's
// <metadata> names, or to the directory's own (the default). A non-zero exit
// there fails the start with the hook's stderr in libvirt's error.
#include "commands.hpp"

#include <poolmem/control.hpp>
#include <poolmem/error.hpp>
#include <poolmem/library.hpp>

#include "policy/pm_policy.h"

#include <libxml/parser.h>
#include <libxml/xpath.h>
#include <libxml/xpathInternals.h>

#include <cerrno>
#include <iostream>
#include <iterator>
#include <memory>
#include <set>
#include <unistd.h>

namespace poolctl {

namespace {

/// The namespace of <poolmem:profile name='gold'/> in a domain's <metadata>.
constexpr const char *kXmlns = "http://poolmem.org/xmlns/libvirt/1.0";
/// libvirt's VIR_DOMAIN_SHORT_NAME_MAX: its per-VM directory is <id>-<the
/// first 20 characters of the name>.
constexpr size_t kShortNameMax = 20;

struct HookOptions {
	std::string vm, op, subop, extra;
};

/// What the hook needs of a domain's XML.
struct VmXml {
	std::string name;
	long id = -1;             ///< -1: not running (no id attribute)
	bool file_backed = false; ///< <memoryBacking><source type='file'/>
	bool has_profile = false; ///< <poolmem:profile> in <metadata>
	std::string profile;
};

/*
 * libxml2, loaded when the hook first parses a domain's XML: linking it
 * would load it and ICU (libicudata's 30 MiB of tables) at every poolctl
 * start, for the verbs that never see XML too. The pointers have the
 * header's own types.
 */
struct Xml {
	decltype(&xmlReadMemory) read_memory;
	decltype(&xmlFreeDoc) free_doc;
	decltype(&xmlXPathNewContext) xpath_new_context;
	decltype(&xmlXPathFreeContext) xpath_free_context;
	decltype(&xmlXPathRegisterNs) xpath_register_ns;
	decltype(&xmlXPathEvalExpression) xpath_eval;
	decltype(&xmlXPathFreeObject) xpath_free_object;
	decltype(&xmlNodeGetContent) node_get_content;
	xmlFreeFunc *free_func; /* the variable xmlFree (Debian's libxml2 has no per-thread allocator) */
};

const Xml &xml()
{
	static const Xml x = [] {
		const poolmem::Library lib("libxml2.so.2", "libxml2");
		Xml r;
		r.read_memory = lib.sym<decltype(r.read_memory)>("xmlReadMemory");
		r.free_doc = lib.sym<decltype(r.free_doc)>("xmlFreeDoc");
		r.xpath_new_context = lib.sym<decltype(r.xpath_new_context)>("xmlXPathNewContext");
		r.xpath_free_context = lib.sym<decltype(r.xpath_free_context)>("xmlXPathFreeContext");
		r.xpath_register_ns = lib.sym<decltype(r.xpath_register_ns)>("xmlXPathRegisterNs");
		r.xpath_eval = lib.sym<decltype(r.xpath_eval)>("xmlXPathEvalExpression");
		r.xpath_free_object = lib.sym<decltype(r.xpath_free_object)>("xmlXPathFreeObject");
		r.node_get_content = lib.sym<decltype(r.node_get_content)>("xmlNodeGetContent");
		r.free_func = lib.sym<xmlFreeFunc *>("xmlFree");
		return r; /* the library stays loaded for the process's life */
	}();
	return x;
}

struct XmlDocDeleter {
	void operator()(xmlDoc *d) const { xml().free_doc(d); }
};
struct XPathCtxDeleter {
	void operator()(xmlXPathContext *c) const { xml().xpath_free_context(c); }
};
struct XPathObjDeleter {
	void operator()(xmlXPathObject *o) const { xml().xpath_free_object(o); }
};

/// The string value of XPath EXPR (empty when it selects nothing), and
/// whether it selected a node.
std::pair<std::string, bool> xpath_string(xmlXPathContext *ctx, const char *expr)
{
	std::unique_ptr<xmlXPathObject, XPathObjDeleter> o(
		xml().xpath_eval(reinterpret_cast<const xmlChar *>(expr), ctx));
	if (!o || o->type != XPATH_NODESET || !o->nodesetval || o->nodesetval->nodeNr == 0)
		return {"", false};
	xmlChar *v = xml().node_get_content(o->nodesetval->nodeTab[0]);
	std::string s = v ? reinterpret_cast<const char *>(v) : "";
	if (v)
		(*xml().free_func)(v);
	return {s, true};
}

VmXml parse_vm_xml(const std::string &vm, const std::string &text)
{
	/* no network, no entities: the XML is libvirt's, but parse it as data */
	std::unique_ptr<xmlDoc, XmlDocDeleter> doc(xml().read_memory(text.data(), static_cast<int>(text.size()),
								 "domain.xml", nullptr,
								 XML_PARSE_NONET | XML_PARSE_NOERROR |
									 XML_PARSE_NOWARNING));
	if (!doc)
		throw UsageError("VM " + vm + ": the domain XML on standard input does not parse");
	std::unique_ptr<xmlXPathContext, XPathCtxDeleter> ctx(xml().xpath_new_context(doc.get()));
	if (!ctx || xml().xpath_register_ns(ctx.get(), reinterpret_cast<const xmlChar *>("pm"),
				       reinterpret_cast<const xmlChar *>(kXmlns)))
		throw poolmem::Error("VM " + vm, "reading the domain XML", ENOMEM);
	VmXml x;
	x.name = xpath_string(ctx.get(), "/domain/name").first;
	if (x.name.empty())
		throw UsageError("VM " + vm + ": the domain XML has no <name>");
	if (auto [id, found] = xpath_string(ctx.get(), "/domain/@id"); found) {
		try {
			x.id = std::stol(id);
		} catch (const std::exception &) {
			throw UsageError("VM " + vm + ": the domain XML's id '" + id + "' is not a number");
		}
	}
	x.file_backed = xpath_string(ctx.get(), "/domain/memoryBacking/source[@type='file']").second;
	std::tie(x.profile, x.has_profile) = xpath_string(ctx.get(), "/domain/metadata/pm:profile/@name");
	return x;
}

/// A domain name for VM NAME: itself when valid, else with every character
/// outside [A-Za-z0-9_.-] (and a leading '.' or '-') as '_', cut to 31.
bool valid_domain_name(const std::string &s)
{
	char buf[PM_NAME_MAX] = {}; /* pm_name_valid() reads the whole field, as the kernel does */
	if (s.size() >= sizeof(buf))
		return false;
	s.copy(buf, s.size());
	return pm_name_valid(buf, sizeof(buf));
}

std::string domain_name_for(const std::string &name)
{
	std::string s = name.substr(0, PM_NAME_MAX - 1);
	if (valid_domain_name(s))
		return s;
	for (size_t i = 0; i < s.size(); i++) {
		unsigned char c = s[i];
		bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
			  ((c == '.' || c == '-') && i > 0);
		if (!ok)
			s[i] = '_';
	}
	if (!valid_domain_name(s))
		s += "_"; /* "control", the one reserved name */
	return s;
}

/*
 * The names libvirt may give the VM's directory (virDomainDefGetShortName):
 * "<id>-" and the first 20 characters of the name. Characters are bytes
 * when the name is ASCII (or libvirtd's locale can't decode it), wide
 * characters otherwise; a UTF-8 name gets both, as the hook can't know
 * libvirtd's locale. The one that is not made expires in the kernel.
 */
std::set<std::string> short_dirs(const VmXml &x)
{
	std::set<std::string> dirs;
	const std::string prefix = std::to_string(x.id) + "-";
	dirs.insert(prefix + x.name.substr(0, kShortNameMax));
	size_t chars = 0, i = 0;
	while (i < x.name.size() && chars < kShortNameMax) {
		unsigned char c = x.name[i];
		i += c < 0x80 ? 1 : c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 1;
		chars++;
	}
	dirs.insert(prefix + x.name.substr(0, std::min(i, x.name.size())));
	return dirs;
}

void run_hook(const GlobalOptions &g, const HookOptions &o)
{
	const bool prepare = o.op == "prepare" && o.subop == "begin";
	const bool release = o.op == "release" && o.subop == "end";
	if (!prepare && !release)
		return; /* every other operation: nothing to do, and read nothing */
	std::string text{std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>()};
	VmXml x = parse_vm_xml(o.vm, text);
	if (!x.file_backed && !x.has_profile)
		return; /* its RAM is not in memory_backing_dir: not ours */
	if (x.has_profile && !x.file_backed)
		throw UsageError("VM " + x.name + ": <poolmem:profile name='" + x.profile +
				 "'/> needs <memoryBacking><source type='file'/> (poolctl profile show " + x.profile +
				 " --libvirt)");
	if (x.has_profile)
		check_name(x.profile, "profile");
	const std::string name = domain_name_for(x.name);

	if (access(g.control.c_str(), F_OK) != 0) {
		/* no module: a VM that asked for a profile must not start without it */
		if (x.has_profile && prepare)
			throw poolmem::Error::plain("VM " + x.name, "profile " + x.profile + ": the poolmem module is not "
								  "loaded (" + g.control + " is missing)", ENOENT);
		return;
	}
	poolmem::Control ctl = open_control(g);
	if (release) {
		ctl.vm_unbind(name); /* nothing waits unless the start failed early */
		return;
	}
	if (x.id < 0)
		throw UsageError("VM " + x.name + ": the domain XML at prepare has no id");
	try {
		for (const auto &dir : short_dirs(x))
			ctl.vm_bind(dir, x.has_profile ? x.profile : "", name);
	} catch (const poolmem::Error &e) {
		/* libvirt's error shows this line alone: say whose start failed */
		throw poolmem::Error::plain("VM " + x.name, e.what(), e.code());
	}
}

} // namespace

void setup_libvirt(CLI::App &app, const GlobalOptions &g)
{
	auto *lv = app.add_subcommand("libvirt", "libvirt integration: per-VM profiles through libvirt's qemu hook");
	lv->require_subcommand(1);

	auto h = std::make_shared<HookOptions>();
	auto *hook = lv->add_subcommand(
		"hook", "libvirt's qemu hook (/etc/libvirt/hooks/qemu.d/poolmem runs it; the domain XML on stdin): at "
			"'prepare begin' the VM's directory in memory_backing_dir gets the profile its "
			"<metadata><poolmem:profile name='P'/> names (" +
				std::string(kXmlns) + "), or the directory's own, and its domain the VM's name");
	hook->add_option("vm", h->vm, "the VM's name")->required();
	hook->add_option("operation", h->op, "libvirt's operation (prepare, start, stopped, release, ...)")->required();
	hook->add_option("sub-operation", h->subop, "begin or end")->required();
	hook->add_option("extra", h->extra, "libvirt's extra argument (ignored)");
	hook->callback([&g, h] { run_hook(g, *h); });
}

} // namespace poolctl
