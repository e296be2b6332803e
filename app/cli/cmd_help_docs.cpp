// kiln help-man and kiln help-completion (hidden): man pages and bash/zsh completion generated from the same CLI11
// definitions that print --help, so the packaged documents cannot drift from the options. The build runs them once
// kiln is linked (app/cli/CMakeLists.txt, target kiln_docs).
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "cli_output.h"
#include "commands.h"
#include "kiln/version.h"

namespace kiln::cli {
namespace {

namespace fs = std::filesystem;

// The subcommands a user sees in `kiln --help` (hidden ones have an empty group).
std::vector<const CLI::App*> visibleSubcommands(const CLI::App& app) {
  return app.get_subcommands([](const CLI::App* sub) { return !sub->get_group().empty(); });
}

// Text for troff: backslashes escaped, and a line starting with '.' or '\'' protected.
std::string troff(const std::string& text) {
  std::string out;
  bool lineStart = true;
  for (char c : text) {
    if (lineStart && (c == '.' || c == '\'')) out += "\\&";
    if (c == '\\') out += "\\e";
    else if (c == '-') out += "\\-";
    else out += c;
    lineStart = c == '\n';
  }
  return out;
}

// "-o,--output" -> "-o, --output"; a positional's name as is.
std::string optionNames(const CLI::Option& option) {
  if (option.nonpositional()) {
    std::string names;
    for (const auto& s : option.get_snames()) names += (names.empty() ? "-" : ", -") + s;
    for (const auto& l : option.get_lnames()) names += (names.empty() ? "--" : ", --") + l;
    return names;
  }
  return option.get_name();
}

// Flags have no type name; options that take a value have one ("TEXT", "INT:POSITIVE", "TEXT:{cpu,vulkan}").
bool takesValue(const CLI::Option& option) { return !option.get_type_name().empty(); }

// The choices of an IsMember check, from its type text "TEXT:{cpu,vulkan}"; empty when there are none.
std::vector<std::string> optionChoices(const CLI::Option& option) {
  const std::string type = option.get_type_name();
  const size_t open = type.find('{');
  const size_t close = type.find('}', open);
  std::vector<std::string> choices;
  if (open == std::string::npos || close == std::string::npos) return choices;
  std::stringstream list(type.substr(open + 1, close - open - 1));
  for (std::string choice; std::getline(list, choice, ',');) choices.push_back(choice);
  return choices;
}

// The footer's "Examples:" lines go to an EXAMPLES section, the rest to NOTES.
void writeFooter(std::ostream& out, const std::string& footer) {
  std::stringstream lines(footer);
  std::string notes, examples;
  bool inExamples = false;
  for (std::string line; std::getline(lines, line);) {
    if (line == "Examples:") {
      inExamples = true;
    } else if (inExamples && line.rfind("  ", 0) == 0) {
      examples += line.substr(2) + "\n";
    } else {
      inExamples = false;
      if (!line.empty()) notes += line + "\n";
    }
  }
  if (!notes.empty()) out << ".SH NOTES\n" << troff(notes);
  if (!examples.empty()) out << ".SH EXAMPLES\n.nf\n" << troff(examples) << ".fi\n";
}

void writeOptions(std::ostream& out, const CLI::App& command) {
  const auto options = command.get_options();
  if (options.empty()) return;
  out << ".SH OPTIONS\n";
  for (const CLI::Option* option : options) {
    out << ".TP\n\\fB" << troff(optionNames(*option)) << "\\fR";
    if (takesValue(*option) && option->nonpositional()) out << " \\fI" << troff(option->get_type_name()) << "\\fR";
    out << "\n" << troff(option->get_description());
    if (!option->get_default_str().empty()) out << " (default: " << troff(option->get_default_str()) << ")";
    if (option->get_required()) out << " (required)";
    out << "\n";
  }
}

void writeSubcommandPage(std::ostream& out, const CLI::App& app, const CLI::App& command) {
  const std::string name = app.get_name() + "-" + command.get_name();
  std::string upper = name;
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  out << ".TH " << troff(upper) << " 1 \"\" \"kiln " << engineVersion() << "\" \"Kiln Manual\"\n";
  out << ".SH NAME\n" << troff(name) << " \\- " << troff(command.get_description()) << "\n";
  out << ".SH SYNOPSIS\n.B " << troff(app.get_name() + " " + command.get_name()) << "\n[\\fIOPTIONS\\fR]";
  for (const CLI::Option* option : command.get_options([](const CLI::Option* o) { return o->get_positional(); })) {
    const bool many = option->get_items_expected_max() > 1;
    out << (option->get_required() ? " \\fI" : " [\\fI") << troff(option->get_name()) << "\\fR" << (many ? "..." : "")
        << (option->get_required() ? "" : "]");
  }
  out << "\n.SH DESCRIPTION\n" << troff(command.get_description()) << ".\n";
  writeOptions(out, command);
  writeFooter(out, command.get_footer());
  out << ".SH SEE ALSO\n\\fBkiln\\fR(1)\n";
}

void writeMainPage(std::ostream& out, const CLI::App& app) {
  out << ".TH KILN 1 \"\" \"kiln " << engineVersion() << "\" \"Kiln Manual\"\n";
  out << ".SH NAME\nkiln \\- " << troff(app.get_description().substr(app.get_description().find(": ") + 2)) << "\n";
  out << ".SH SYNOPSIS\n.B kiln\n\\fICOMMAND\\fR [\\fIOPTIONS\\fR]\n.br\n.B kiln\n\\-\\-help | \\-\\-version\n";
  out << ".SH DESCRIPTION\n" << troff(app.get_description()) << ".\nEach command has its own page, "
      << "\\fBkiln\\-\\fICOMMAND\\fR(1), and prints its options with \\fBkiln \\fICOMMAND\\fB \\-\\-help\\fR.\n";
  out << ".SH COMMANDS\n";
  for (const CLI::App* command : visibleSubcommands(app)) {
    out << ".TP\n\\fB" << troff(command->get_name()) << "\\fR\n" << troff(command->get_description()) << "\n";
  }
  writeOptions(out, app);
  out << ".SH SEE ALSO\n";
  std::string sep;
  for (const CLI::App* command : visibleSubcommands(app)) {
    out << sep << "\\fBkiln\\-" << troff(command->get_name()) << "\\fR(1)";
    sep = ",\n";
  }
  out << "\n";
}

// A value for the shells: single-quoted, with ' closed, escaped and reopened.
std::string shellQuote(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string joined(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& w : words) out += (out.empty() ? "" : " ") + w;
  return out;
}

std::vector<std::string> flagWords(const CLI::App& command) {
  std::vector<std::string> words;
  for (const CLI::Option* option : command.get_options()) {
    for (const auto& s : option->get_snames()) words.push_back("-" + s);
    for (const auto& l : option->get_lnames()) words.push_back("--" + l);
  }
  return words;
}

void writeBashCompletion(std::ostream& out, const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::App* command : visibleSubcommands(app)) names.push_back(command->get_name());
  out << "# bash completion for kiln, generated by `kiln help-completion bash` from kiln's option definitions.\n"
         "_kiln() {\n"
         "  local cur=\"${COMP_WORDS[COMP_CWORD]}\" prev=\"${COMP_WORDS[COMP_CWORD-1]}\"\n"
         "  if [[ $COMP_CWORD -eq 1 ]]; then\n"
         "    COMPREPLY=($(compgen -W " << shellQuote(joined(names) + " " + joined(flagWords(app))) << " -- \"$cur\"))\n"
         "    return\n"
         "  fi\n"
         "  local options='' choices=''\n"
         "  case \"${COMP_WORDS[1]}\" in\n";
  for (const CLI::App* command : visibleSubcommands(app)) {
    out << "    " << command->get_name() << ")\n      options=" << shellQuote(joined(flagWords(*command))) << "\n";
    std::string cases;
    for (const CLI::Option* option : command->get_options()) {
      const auto choices = optionChoices(*option);
      if (choices.empty() || !option->nonpositional()) continue;
      std::vector<std::string> flags;
      for (const auto& s : option->get_snames()) flags.push_back("-" + s);
      for (const auto& l : option->get_lnames()) flags.push_back("--" + l);
      std::string pattern;
      for (const auto& f : flags) pattern += (pattern.empty() ? "" : "|") + f;
      cases += "        " + pattern + ") choices=" + shellQuote(joined(choices)) + " ;;\n";
    }
    if (!cases.empty()) out << "      case \"$prev\" in\n" << cases << "      esac\n";
    out << "      ;;\n";
  }
  out << "  esac\n"
         "  if [[ -n $choices ]]; then\n"
         "    COMPREPLY=($(compgen -W \"$choices\" -- \"$cur\"))\n"
         "  elif [[ $cur == -* ]]; then\n"
         "    COMPREPLY=($(compgen -W \"$options\" -- \"$cur\"))\n"
         "  fi\n"
         "}\n"
         "# -o default: file names where no option or choice applies (models, binaries, jobs files).\n"
         "complete -o default -F _kiln kiln\n";
}

// A zsh _arguments description: [ ] and : escaped.
std::string zshText(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '[' || c == ']' || c == ':' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

void writeZshSpecs(std::ostream& out, const CLI::App& command) {
  for (const CLI::Option* option : command.get_options()) {
    const std::string description = zshText(option->get_description());
    std::string action;
    if (takesValue(*option)) {
      const auto choices = optionChoices(*option);
      action = ":" + zshText(option->get_type_name()) + ":" + (choices.empty() ? "_files" : "(" + joined(choices) + ")");
    }
    if (!option->nonpositional()) {
      out << " \\\n    " << shellQuote((option->get_items_expected_max() > 1 ? "*:" : ":") + description + ":_files");
      continue;
    }
    std::vector<std::string> flags;
    for (const auto& s : option->get_snames()) flags.push_back("-" + s);
    for (const auto& l : option->get_lnames()) flags.push_back("--" + l);
    const bool repeatable = option->get_multi_option_policy() == CLI::MultiOptionPolicy::TakeAll ||
                            option->get_items_expected_max() > 1;
    for (const auto& flag : flags) {
      out << " \\\n    " << shellQuote((repeatable ? "*" : "") + flag + "[" + description + "]" + action);
    }
  }
}

void writeZshCompletion(std::ostream& out, const CLI::App& app) {
  out << "#compdef kiln\n"
         "# zsh completion for kiln, generated by `kiln help-completion zsh` from kiln's option definitions.\n"
         "_kiln() {\n"
         "  local context state state_descr line\n"
         "  typeset -A opt_args\n"
         "  local -a commands\n"
         "  commands=(\n";
  for (const CLI::App* command : visibleSubcommands(app)) {
    out << "    " << shellQuote(command->get_name() + ":" + command->get_description()) << "\n";
  }
  out << "  )\n"
         "  _arguments -C '1:command:->command' '*::argument:->argument'";
  writeZshSpecs(out, app);
  out << "\n"
         "  case $state in\n"
         "    command) _describe 'kiln command' commands ;;\n"
         "    argument)\n"
         "      case ${words[1]} in\n";
  for (const CLI::App* command : visibleSubcommands(app)) {
    out << "        " << command->get_name() << ")\n          _arguments -s";
    writeZshSpecs(out, *command);
    out << " ;;\n";
  }
  out << "      esac ;;\n"
         "  esac\n"
         "}\n"
         "_kiln \"$@\"\n";
}

struct HelpManArgs {
  std::string subcommand;
  std::string directory;
};

int runHelpMan(const CLI::App& app, const HelpManArgs& args) {
  if (!args.directory.empty()) {
    std::error_code ec;
    fs::create_directories(args.directory, ec);
    std::ofstream main(fs::path(args.directory) / "kiln.1");
    writeMainPage(main, app);
    for (const CLI::App* command : visibleSubcommands(app)) {
      std::ofstream page(fs::path(args.directory) / ("kiln-" + command->get_name() + ".1"));
      writeSubcommandPage(page, app, *command);
      if (!page) {
        std::fprintf(stderr, "kiln: error: cannot write man pages into %s\n", args.directory.c_str());
        return kExitFailure;
      }
    }
    return main ? kExitOk : kExitFailure;
  }
  std::ostringstream out;
  if (args.subcommand.empty()) {
    writeMainPage(out, app);
  } else {
    for (const CLI::App* command : visibleSubcommands(app)) {
      if (command->get_name() == args.subcommand) writeSubcommandPage(out, app, *command);
    }
    if (out.str().empty()) {
      std::fprintf(stderr, "kiln: error: no command '%s'\n", args.subcommand.c_str());
      return kExitUsage;
    }
  }
  std::fputs(out.str().c_str(), stdout);
  return kExitOk;
}

}  // namespace

void registerHelpDocs(CLI::App& app, Commands& commands) {
  auto manArgs = std::make_shared<HelpManArgs>();
  CLI::App* man = app.add_subcommand("help-man", "Print kiln's man page in troff, or a command's (internal)");
  man->group("");  // hidden from kiln --help
  man->add_option("command", manArgs->subcommand, "The command whose page to print (default: kiln(1))");
  man->add_option("--dir", manArgs->directory, "Write kiln.1 and every kiln-COMMAND.1 into this folder instead");
  man->callback([&app, &commands, manArgs] { commands.run = [&app, manArgs] { return runHelpMan(app, *manArgs); }; });

  auto shell = std::make_shared<std::string>();
  CLI::App* completion = app.add_subcommand("help-completion", "Print the bash or zsh completion script (internal)");
  completion->group("");
  completion->add_option("shell", *shell, "bash or zsh")->required()->check(CLI::IsMember({"bash", "zsh"}));
  completion->callback([&app, &commands, shell] {
    commands.run = [&app, shell] {
      std::ostringstream out;
      if (*shell == "bash") writeBashCompletion(out, app);
      else writeZshCompletion(out, app);
      std::fputs(out.str().c_str(), stdout);
      return kExitOk;
    };
  });
}

}  // namespace kiln::cli
